package io.flywheel.enrich.model;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;
import java.util.HashMap;
import java.util.Map;
import java.util.zip.GZIPInputStream;

import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveInputStream;

/**
 * The files of the npm package {@code nsfwjs@4.4.0} (MIT, Infinite Red) that the converter reads:
 * {@code dist/models/<model>/model.min.js} and its {@code group1-shard*of*.min.js} weight shards.
 * Either an npm tarball ({@code nsfwjs-4.4.0.tgz}, checked against the registry's pinned sha512
 * integrity) or an installed package folder ({@code node_modules/nsfwjs}).
 */
public final class NsfwjsPackage {
    /** The package version this converter was written and checked against. */
    public static final String VERSION = "4.4.0";
    /** Where the npm registry serves the tarball. */
    public static final String TARBALL_URL = "https://registry.npmjs.org/nsfwjs/-/nsfwjs-4.4.0.tgz";
    /** Subresource-integrity value of the tarball, as the registry metadata ({@code dist.integrity}) gives it. */
    public static final String INTEGRITY =
            "sha512-krC1fgeTLXtZwgdpKJ0jm7hqv0gTSRQQRL+FhOaxaJ9Wj92t42BO3csO2odwgTAgZgf2RvkwPtp0R8Aa7dc+MA==";

    private static final long MAX_ENTRY_BYTES = 64L << 20;

    private final String origin;
    private final Path dir;                    // installed package folder, or null
    private final Map<String, byte[]> entries; // tarball contents below package/, or null

    private NsfwjsPackage(String origin, Path dir, Map<String, byte[]> entries) {
        this.origin = origin;
        this.dir = dir;
        this.entries = entries;
    }

    /**
     * Opens an installed package folder (the one holding {@code package.json} and {@code dist/}).
     *
     * @throws ModelFormatException when the folder is not nsfwjs 4.4.0
     * @throws NoSuchFileException when the folder does not exist
     */
    public static NsfwjsPackage fromDirectory(Path packageDir) throws IOException {
        if (!Files.isDirectory(packageDir)) {
            throw new NoSuchFileException(packageDir.toString());
        }
        NsfwjsPackage p = new NsfwjsPackage(packageDir.toString(), packageDir, null);
        p.checkVersion();
        return p;
    }

    /**
     * Reads an npm tarball after checking its sha512 against {@link #INTEGRITY}.
     *
     * @throws ModelFormatException when the digest differs, or the archive is not a gzip tar of nsfwjs 4.4.0
     */
    public static NsfwjsPackage fromTarball(Path tgz) throws IOException {
        byte[] bytes = Files.readAllBytes(tgz);
        return fromTarball(bytes, tgz.toString());
    }

    /** Same as {@link #fromTarball(Path)} for tarball bytes already in memory; {@code origin} names them in errors. */
    public static NsfwjsPackage fromTarball(byte[] tgz, String origin) throws IOException {
        String got = integrity(tgz);
        if (!got.equals(INTEGRITY)) {
            throw new ModelFormatException(origin + ": not the nsfwjs " + VERSION + " tarball: expected integrity "
                    + INTEGRITY + ", got " + got);
        }
        Map<String, byte[]> entries = new HashMap<>();
        try (TarArchiveInputStream tar = new TarArchiveInputStream(
                new GZIPInputStream(new BufferedInputStream(new java.io.ByteArrayInputStream(tgz))))) {
            TarArchiveEntry e;
            while ((e = tar.getNextEntry()) != null) {
                if (!e.isFile() || !e.getName().startsWith("package/")) {
                    continue;
                }
                String name = e.getName().substring("package/".length());
                if (!name.equals("package.json") && !name.startsWith("dist/models/")) {
                    continue;
                }
                if (e.getSize() > MAX_ENTRY_BYTES) {
                    throw new ModelFormatException(origin + ": entry " + e.getName() + " is " + e.getSize()
                            + " bytes, more than the " + MAX_ENTRY_BYTES + " expected at most");
                }
                entries.put(name, tar.readAllBytes());
            }
        } catch (IOException ex) {
            if (ex instanceof ModelFormatException) {
                throw ex;
            }
            throw new ModelFormatException(origin + ": not a readable gzip tar archive: " + ex.getMessage(), ex);
        }
        NsfwjsPackage p = new NsfwjsPackage(origin, null, entries);
        p.checkVersion();
        return p;
    }

    /** @return {@code sha512-<base64>} of the bytes, the npm / Subresource Integrity form */
    public static String integrity(byte[] bytes) {
        try {
            return "sha512-" + Base64.getEncoder().encodeToString(MessageDigest.getInstance("SHA-512").digest(bytes));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("the JDK lacks SHA-512", e);
        }
    }

    /** @return where the package came from (a path), for messages and model metadata */
    public String origin() {
        return origin;
    }

    /**
     * Reads one file of the package.
     *
     * @param relative path below the package root, e.g. {@code dist/models/mobilenet_v2/model.min.js}
     * @throws ModelFormatException when the package has no such file
     */
    public byte[] read(String relative) throws IOException {
        if (entries != null) {
            byte[] b = entries.get(relative);
            if (b == null) {
                throw new ModelFormatException(origin + ": the package has no file " + relative);
            }
            return b;
        }
        Path p = dir.resolve(relative);
        if (!Files.isRegularFile(p)) {
            throw new ModelFormatException(origin + ": the package has no file " + relative);
        }
        if (Files.size(p) > MAX_ENTRY_BYTES) {
            throw new ModelFormatException(p + " is " + Files.size(p) + " bytes, more than the " + MAX_ENTRY_BYTES
                    + " expected at most");
        }
        try (InputStream in = Files.newInputStream(p)) {
            return in.readAllBytes();
        }
    }

    private void checkVersion() throws IOException {
        String json = new String(read("package.json"), java.nio.charset.StandardCharsets.UTF_8);
        Object parsed = JsLiteral.parseAfter(json, "{", origin + "/package.json");
        Object name = parsed instanceof Map<?, ?> m ? m.get("name") : null;
        Object version = parsed instanceof Map<?, ?> m ? m.get("version") : null;
        if (!"nsfwjs".equals(name) || !VERSION.equals(version)) {
            throw new ModelFormatException(origin + "/package.json: expected nsfwjs " + VERSION + ", found " + name + " "
                    + version);
        }
    }
}
