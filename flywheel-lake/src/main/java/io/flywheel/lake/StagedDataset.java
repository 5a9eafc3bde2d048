package io.flywheel.lake;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.util.Text;
import org.lance.Dataset;
import org.lance.ipc.LanceScanner;
import org.lance.ipc.ScanOptions;

import io.flywheel.error.BadInputException;
import io.flywheel.error.NotFoundException;

/**
 * A Lance dataset outside the lake that another process wrote for it to commit: the staging datasets of a Spark job
 * (written by the lance-spark connector, lance-core 4.0, in Lance file format 2.1, which this lance-core 7.0 reads).
 * Read whole, column by column, as plain Java values.
 */
public final class StagedDataset {
    private StagedDataset() {}

    /**
     * Reads named columns of every row.
     *
     * @param uri the dataset's folder ({@code .../frames.lance})
     * @param columns the columns to read, in the order of each returned row
     * @return one {@code Object[]} per row, in the dataset's row order: strings as {@link String}, integers as
     *     {@link Long} or {@link Integer}, null as null
     * @throws NotFoundException when there is no dataset at {@code uri}
     * @throws BadInputException when it lacks a column or cannot be read
     */
    public static List<Object[]> read(Path uri, List<String> columns) {
        if (!Files.isDirectory(uri.resolve("_versions"))) {
            throw new NotFoundException("no Lance dataset at " + uri);
        }
        List<Object[]> out = new ArrayList<>();
        try (BufferAllocator alloc = new RootAllocator();
             Dataset ds = Dataset.open().allocator(alloc).uri(uri.toString()).build()) {
            for (String c : columns) {
                if (ds.getSchema().getFields().stream().noneMatch(f -> f.getName().equals(c))) {
                    throw new BadInputException("staged dataset " + uri + " has no column " + c + " (columns: "
                            + ds.getSchema().getFields().stream().map(f -> f.getName()).toList() + ")");
                }
            }
            try (LanceScanner s = ds.newScan(new ScanOptions.Builder().columns(columns).build());
                 ArrowReader r = s.scanBatches()) {
                while (r.loadNextBatch()) {
                    VectorSchemaRoot root = r.getVectorSchemaRoot();
                    List<FieldVector> vs = new ArrayList<>();
                    for (String c : columns) {
                        vs.add(root.getVector(c));
                    }
                    for (int i = 0; i < root.getRowCount(); i++) {
                        Object[] row = new Object[columns.size()];
                        for (int k = 0; k < row.length; k++) {
                            Object v = vs.get(k).getObject(i);
                            row[k] = v instanceof Text t ? t.toString() : v;
                        }
                        out.add(row);
                    }
                }
            }
        } catch (io.flywheel.error.FlywheelException e) {
            throw e;
        } catch (Exception e) {
            throw new BadInputException("cannot read staged dataset " + uri + ": " + Lake.lanceMessage(e), e);
        }
        return out;
    }
}
