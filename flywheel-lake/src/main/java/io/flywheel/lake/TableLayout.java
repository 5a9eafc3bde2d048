package io.flywheel.lake;

import org.lance.Dataset;
import org.lance.FragmentMetadata;

/**
 * The fragments of one table version, as compaction sees them.
 *
 * @param fragments number of fragments
 * @param smallFragments fragments with fewer live rows than the policy's target
 * @param rows live rows (physical rows less deleted rows)
 * @param physicalRows rows stored in the data files, deleted ones included
 * @param deletedRows rows marked deleted (deletion files) but still stored
 * @param dataFiles data files of all fragments (an update of some columns adds a file to each fragment it touches)
 */
public record TableLayout(int fragments, int smallFragments, long rows, long physicalRows, long deletedRows,
        int dataFiles) {
    /** @return the deleted share of the physical rows, in [0, 1]; 0 for an empty table */
    public double deletedFraction() {
        return physicalRows == 0 ? 0 : (double) deletedRows / physicalRows;
    }

    /**
     * @param ds a table version
     * @param targetRowsPerFragment a fragment with fewer live rows than this is small
     * @return its layout, from the manifest's fragment metadata (no data read)
     */
    static TableLayout of(Dataset ds, long targetRowsPerFragment) {
        int fragments = 0;
        int small = 0;
        long physical = 0;
        long deleted = 0;
        int files = 0;
        for (org.lance.Fragment f : ds.getFragments()) {
            FragmentMetadata m = f.metadata();
            fragments++;
            long live = m.getPhysicalRows() - m.getNumDeletions();
            if (live < targetRowsPerFragment) {
                small++;
            }
            physical += m.getPhysicalRows();
            deleted += m.getNumDeletions();
            files += m.getFiles().size();
        }
        return new TableLayout(fragments, small, physical - deleted, physical, deleted, files);
    }
}
