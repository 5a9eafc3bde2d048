package io.flywheel.serve.cache;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

/**
 * The files and byte ranges a training set's reads touch: what {@link Warmer} fetches and what
 * {@code flywheel warm --list} prints.
 *
 * @param lake the lake location (folder or {@code s3://bucket/prefix})
 * @param tag the training set's tag
 * @param samplesVersion version of {@code trainset_samples} holding the set
 * @param columns the columns of {@code trainset_samples} the reads need
 * @param files per file, its ranges (merged, ascending)
 */
public record WarmPlan(String lake, String tag, long samplesVersion, List<String> columns, List<FileRanges> files) {
    /** What a file is. */
    public enum Kind {
        /** a Lance manifest, tag or small table file, fetched whole */
        LANCE_META,
        /** a Lance data file of trainset_samples: footer, metadata and the read columns' pages */
        LANCE_DATA,
        /** a raw recording: image byte ranges or whole MCAP chunk records */
        RAW
    }

    /**
     * @param key cache key: relative to the lake root for Lance files, {@code raw/<absolute path>} for raw files
     * @param path the file's full path or URI, for listings
     * @param kind what it is
     * @param size file size in bytes
     * @param ranges byte ranges to fetch, disjoint and ascending
     */
    public record FileRanges(String key, String path, Kind kind, long size, List<ByteRange> ranges) {
        public FileRanges {
            ranges = List.copyOf(ranges);
        }

        /** @return bytes in the ranges */
        public long bytes() {
            return ByteRange.total(ranges);
        }
    }

    public WarmPlan {
        columns = List.copyOf(columns);
        files = List.copyOf(files);
    }

    /** @return bytes in all ranges */
    public long bytes() {
        return files.stream().mapToLong(FileRanges::bytes).sum();
    }

    /** @return bytes of the files the ranges are in (what a whole-file warm would fetch) */
    public long fileBytes() {
        return files.stream().mapToLong(FileRanges::size).sum();
    }

    /** @return the files of one kind */
    public List<FileRanges> files(Kind kind) {
        return files.stream().filter(f -> f.kind() == kind).toList();
    }

    /**
     * The warm list as released JuiceFS reads it ({@code juicefs warmup --file}, v1.3.x and v1.4.x): one
     * absolute path per line, whole files.
     *
     * @param pathPrefix replaces the lake location at the start of Lance paths (the lake's mount
     *     point under JuiceFS), or null to keep it
     * @return the lines, one per file
     */
    public List<String> juicefsLines(String pathPrefix) {
        return files.stream().map(f -> mountedPath(f, pathPrefix)).toList();
    }

    /**
     * The warm list with byte ranges, as JuiceFS's main branch reads it (after v1.4.1 and v1.3.3): one
     * line per file, {@code <path> [start-end;start-end]}, start inclusive, end exclusive, ranges merged
     * and ascending, no space after the {@code ;}.
     *
     * @param pathPrefix as for {@link #juicefsLines(String)}
     * @return the lines, one per file
     */
    public List<String> juicefsRangeLines(String pathPrefix) {
        List<String> out = new ArrayList<>();
        for (FileRanges f : files) {
            out.add(mountedPath(f, pathPrefix) + " ["
                    + f.ranges().stream().map(r -> r.start() + "-" + r.end()).collect(Collectors.joining(";")) + "]");
        }
        return out;
    }

    /**
     * @param f one of this plan's files
     * @param pathPrefix replaces the lake location at the start of a Lance path, or null to keep it
     * @return the file's path as a reader at that mount point names it
     */
    public String mountedPath(FileRanges f, String pathPrefix) {
        String p = f.path();
        return pathPrefix != null && f.kind() != Kind.RAW && p.startsWith(lake)
                ? pathPrefix + p.substring(lake.length()) : p;
    }
}
