package io.flywheel.fleet.sim;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import io.flywheel.error.BadInputException;
import io.flywheel.fleet.auth.RobotTokens;
import io.flywheel.fleet.upload.UploadIds;

/**
 * A fleet's tokens file: one robot per line, {@code ROBOT TOKEN} (separated by white space), as
 * {@code flywheel gateway token add ROBOT LAKE} prints the token; blank lines and lines starting with {@code #} are
 * skipped. Keep it readable by its owner only: the tokens are secrets.
 * <pre>
 * for r in robot_01 robot_02; do echo "$r $(flywheel gateway token add $r lake/)"; done &gt; fleet.tokens
 * </pre>
 */
public final class TokenFile {
    private TokenFile() {}

    /**
     * @param file the tokens file
     * @return robot id to token
     * @throws BadInputException naming the file and line when a line is not {@code ROBOT TOKEN}, the robot id is not
     *     valid, the token is not a gateway token, or a robot is listed twice
     * @throws IOException when the file cannot be read
     */
    public static Map<String, String> read(Path file) throws IOException {
        List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        Map<String, String> out = new TreeMap<>();
        for (int i = 0; i < lines.size(); i++) {
            String l = lines.get(i).strip();
            if (l.isEmpty() || l.startsWith("#")) {
                continue;
            }
            String where = file + ":" + (i + 1) + ": ";
            String[] f = l.split("\\s+");
            if (f.length != 2) {
                throw new BadInputException(where + "expected 'ROBOT TOKEN', got " + f.length + " field(s)");
            }
            String bad = UploadIds.checkRobotId(f[0]);
            if (bad != null) {
                throw new BadInputException(where + bad);
            }
            if (!f[1].startsWith(RobotTokens.PREFIX) || f[1].indexOf('.') < 0) {
                throw new BadInputException(where + "the token of " + f[0] + " is not a gateway token ("
                        + RobotTokens.PREFIX + "<id>.<secret>, as flywheel gateway token add prints it)");
            }
            if (out.put(f[0], f[1]) != null) {
                throw new BadInputException(where + "robot " + f[0] + " is listed twice");
            }
        }
        return out;
    }
}
