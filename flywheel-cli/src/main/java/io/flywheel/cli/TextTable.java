package io.flywheel.cli;

import java.io.PrintStream;
import java.util.List;

/** Columns of text, left aligned, padded to the widest value of each. */
final class TextTable {
    private TextTable() {}

    static void print(PrintStream out, List<String> header, List<List<String>> rows) {
        int[] w = new int[header.size()];
        for (int i = 0; i < w.length; i++) {
            w[i] = header.get(i).length();
        }
        for (List<String> r : rows) {
            for (int i = 0; i < w.length && i < r.size(); i++) {
                w[i] = Math.max(w[i], r.get(i) == null ? 4 : r.get(i).length());
            }
        }
        line(out, header, w);
        for (List<String> r : rows) {
            line(out, r, w);
        }
    }

    private static void line(PrintStream out, List<String> cells, int[] w) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < cells.size(); i++) {
            String c = cells.get(i) == null ? "null" : cells.get(i);
            b.append(c);
            if (i < cells.size() - 1) {
                b.append(" ".repeat(Math.max(1, w[i] - c.length() + 2)));
            }
        }
        out.println(b.toString().stripTrailing());
    }
}
