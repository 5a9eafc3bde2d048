package io.flywheel.lake;

import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.complex.ListVector;

/**
 * Copies one value between Arrow vectors of the same type, fixed-size lists included: Arrow Java's
 * {@link FieldVector#copyFromSafe} cannot copy a {@code fixed_size_list} or a list of them ("FieldWriter not
 * implemented for FixedSizeList type"), which the lake's vector columns are ({@code episodes.emb_<key>},
 * {@code frames.emb_<key>}).
 */
public final class ArrowCopy {
    private ArrowCopy() {}

    /**
     * Copies {@code from[i]} to {@code to[j]}, growing {@code to} as needed. Write the rows of a list vector in
     * increasing {@code j}.
     *
     * @param from the source vector
     * @param i the source row
     * @param to a vector of the same type
     * @param j the target row
     */
    public static void copy(FieldVector from, int i, FieldVector to, int j) {
        if (from instanceof FixedSizeListVector f) {
            FixedSizeListVector t = (FixedSizeListVector) to;
            if (f.isNull(i)) {
                t.setNull(j);
                return;
            }
            t.setNotNull(j);
            int n = f.getListSize();
            FieldVector fd = (FieldVector) f.getDataVector();
            FieldVector td = (FieldVector) t.getDataVector();
            for (int k = 0; k < n; k++) {
                copy(fd, i * n + k, td, j * n + k);
            }
        } else if (from instanceof ListVector f && f.getDataVector() instanceof FixedSizeListVector) {
            ListVector t = (ListVector) to;
            if (f.isNull(i)) {
                t.setNull(j);
                return;
            }
            int start = f.getElementStartIndex(i);
            int n = f.getElementEndIndex(i) - start;
            int at = t.startNewValue(j);
            for (int k = 0; k < n; k++) {
                copy((FieldVector) f.getDataVector(), start + k, (FieldVector) t.getDataVector(), at + k);
            }
            t.endValue(j, n);
        } else {
            to.copyFromSafe(i, j, from);
        }
    }
}
