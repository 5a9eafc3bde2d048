package io.flywheel.fleet.upload;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Locale;
import java.util.regex.Pattern;

/** Names of uploads: robot ids, SHA-256 digests, upload ids, cameras; each check says what is wrong. */
public final class UploadIds {
    private static final Pattern ROBOT = Pattern.compile("[A-Za-z0-9_-][A-Za-z0-9._-]{0,63}");
    private static final Pattern SHA256 = Pattern.compile("[0-9a-fA-F]{64}");
    private static final Pattern CAMERA = Pattern.compile("[A-Za-z0-9_-]{1,64}");

    private UploadIds() {}

    /**
     * @param robotId a robot id
     * @return null when it is a valid robot id (1-64 characters of {@code [A-Za-z0-9._-]}, not starting with '.'),
     *     else what is wrong with it
     */
    public static String checkRobotId(String robotId) {
        if (robotId == null || robotId.isEmpty()) {
            return "robot id is empty";
        }
        return ROBOT.matcher(robotId).matches() ? null : "robot id '" + robotId + "' is not 1-64 characters of"
                + " [A-Za-z0-9._-] starting with a letter, digit, '_' or '-'";
    }

    /**
     * @param sha256 a SHA-256 in hex
     * @return null when it is 64 hex digits (either case), else what is wrong with it
     */
    public static String checkSha256(String sha256) {
        if (sha256 == null || sha256.isEmpty()) {
            return "sha256 is empty";
        }
        return SHA256.matcher(sha256).matches() ? null : "sha256 '" + abbreviate(sha256) + "' is not 64 hex digits"
                + " (got " + sha256.length() + " characters)";
    }

    /**
     * @param camera a sidecar's camera name
     * @return null when it is 1-64 characters of {@code [A-Za-z0-9_-]}, else what is wrong with it
     */
    public static String checkCamera(String camera) {
        return camera != null && CAMERA.matcher(camera).matches() ? null
                : "camera '" + camera + "' is not 1-64 characters of [A-Za-z0-9_-]";
    }

    /**
     * The id of the upload of one file by one robot: the same for every retry, so a retry resumes the same staging
     * file.
     *
     * @param robotId a valid robot id
     * @param sha256 the file's SHA-256, lower-case hex
     * @return {@code u-} and the first 24 hex digits of SHA-256(robotId + '/' + sha256)
     */
    public static String uploadId(String robotId, String sha256) {
        return id("u-", robotId + "/" + sha256.toLowerCase(Locale.ROOT));
    }

    /**
     * The id of the live stream of one episode of one robot: the same for every resume of it.
     *
     * @param robotId a valid robot id
     * @param episodeId the robot's name of the episode
     * @return {@code l-} and the first 24 hex digits of SHA-256("live/" + robotId + '/' + episodeId)
     */
    public static String streamId(String robotId, String episodeId) {
        return id("l-", "live/" + robotId + "/" + episodeId);
    }

    /** @return {@code prefix} and the first 24 hex digits of the SHA-256 of {@code text} (UTF-8) */
    private static String id(String prefix, String text) {
        MessageDigest md = sha256();
        md.update(text.getBytes(StandardCharsets.UTF_8));
        return prefix + HexFormat.of().formatHex(md.digest()).substring(0, 24);
    }

    /** @return a new SHA-256 digest */
    public static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required of every Java platform", e);
        }
    }

    static String abbreviate(String s) {
        return s.length() <= 80 ? s : s.substring(0, 77) + "...";
    }
}
