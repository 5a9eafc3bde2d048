package io.flywheel.ros.cdr;

import java.util.ArrayDeque;
import java.util.Deque;

/**
 * Internal, stackless signal that decoding failed; it collects the field path while unwinding and
 * is turned into a {@link io.flywheel.decode.DecodeException} at the public entry points. Never
 * escapes this package.
 */
final class CdrError extends RuntimeException {
    private static final long serialVersionUID = 1L;
    final int offset;
    final transient Deque<String> path = new ArrayDeque<>();

    CdrError(int offset, String problem) {
        super(problem, null, false, false);
        this.offset = offset;
    }

    /** Prepends a field name or an {@code [index]} to the path. */
    CdrError push(String segment) {
        path.addFirst(segment);
        return this;
    }

    String pathString() {
        StringBuilder sb = new StringBuilder();
        for (String s : path) {
            if (sb.length() > 0 && !s.startsWith("[")) {
                sb.append('.');
            }
            sb.append(s);
        }
        return sb.length() == 0 ? "<root>" : sb.toString();
    }
}
