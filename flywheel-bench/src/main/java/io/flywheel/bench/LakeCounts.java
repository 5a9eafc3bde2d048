package io.flywheel.bench;

import java.util.TreeSet;

import io.flywheel.lake.Lake;
import io.flywheel.lake.LakeTable;
import io.flywheel.lake.ScanRequest;
import io.flywheel.rows.EpisodeRow;

/**
 * Prints the row counts of a lake's ingest tables at its newest commit, and whether any episode id or raw file
 * appears twice, as one JSON line: the check of {@code bench/lake-concurrency.sh}.
 *
 * <p>Arguments: lake folder.
 */
public final class LakeCounts {
    private LakeCounts() {}

    public static void main(String[] args) {
        try (Lake lake = Lake.open(args[0]); LakeTable raw = lake.table("raw_files");
                LakeTable eps = lake.table("episodes"); LakeTable frames = lake.table("frames")) {
            var ids = eps.episodes(ScanRequest.all()).stream().map(EpisodeRow::episodeId).toList();
            var shas = raw.rawFiles(ScanRequest.all()).stream().map(r -> r.sha256()).toList();
            System.out.printf("{\"commits\":%d,\"raw_files\":%d,\"episodes\":%d,\"frames\":%d,\"duplicates\":%d}%n",
                    lake.snapshot().seq(), raw.countRows(), eps.countRows(), frames.countRows(),
                    ids.size() - new TreeSet<>(ids).size() + shas.size() - new TreeSet<>(shas).size());
        }
    }
}
