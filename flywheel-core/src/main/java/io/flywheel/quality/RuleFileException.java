package io.flywheel.quality;

import java.io.IOException;

/**
 * A quality-rule file is not valid: YAML syntax, an unknown metric or operator, a missing field, a duplicate id.
 * The message names the file, the line and the rule id when known:
 * {@code rules.yaml:7: rule 'low_fps': unknown metric 'fps' (known: duration_s, ...)}.
 */
public class RuleFileException extends IOException {
    private static final long serialVersionUID = 1L;
    private final String file;
    private final int line;
    private final String ruleId;
    private final String problem;

    /**
     * @param file    file name (or a name for in-memory text)
     * @param line    1-based line, 0 when unknown
     * @param ruleId  rule id, null when unknown
     * @param problem what was wrong and what was expected
     */
    public RuleFileException(String file, int line, String ruleId, String problem, Throwable cause) {
        super(file + (line > 0 ? ":" + line : "") + ": " + (ruleId != null ? "rule '" + ruleId + "': " : "") + problem, cause);
        this.file = file;
        this.line = line;
        this.ruleId = ruleId;
        this.problem = problem;
    }

    public String file() { return file; }
    /** 1-based line, 0 when unknown. */
    public int line() { return line; }
    /** The rule's id, or null. */
    public String ruleId() { return ruleId; }
    /** The problem, without file, line and rule. */
    public String problem() { return problem; }
}
