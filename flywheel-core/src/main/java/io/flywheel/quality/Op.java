package io.flywheel.quality;

/**
 * Comparison of a rule: the rule <em>fires</em> (the check fails) when {@code observed OP threshold} is true.
 * Written in rule files as {@code <}, {@code <=}, {@code >}, {@code >=}, {@code ==}, {@code !=} (quote them in YAML:
 * a plain {@code >} starts a folded block scalar).
 */
public enum Op {
    LT("<"), LE("<="), GT(">"), GE(">="), EQ("=="), NE("!=");

    private final String symbol;

    Op(String symbol) {
        this.symbol = symbol;
    }

    /** The operator as written in rule files. */
    public String symbol() {
        return symbol;
    }

    /** True when {@code observed OP threshold} holds. NaN never satisfies any comparison but {@code !=}. */
    public boolean test(double observed, double threshold) {
        switch (this) {
            case LT: return observed < threshold;
            case LE: return observed <= threshold;
            case GT: return observed > threshold;
            case GE: return observed >= threshold;
            case EQ: return observed == threshold;
            default: return observed != threshold;
        }
    }

    /** The operator written {@code s}, or null. */
    static Op parse(String s) {
        for (Op o : values()) if (o.symbol.equals(s.trim())) return o;
        return null;
    }
}
