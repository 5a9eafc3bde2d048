package io.flywheel.eval;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import io.flywheel.error.BadInputException;

/** RFC 4180 records out of characters: comma separated, double-quoted fields may hold commas, quotes and newlines. */
final class CsvLexer {
    /** One record and the line it starts on (1-based). */
    record Line(long number, List<String> fields) {}

    private final BufferedReader in;
    private final Path file;
    private long line = 1;
    private boolean eof;

    CsvLexer(BufferedReader in, Path file) {
        this.in = in;
        this.file = file;
    }

    /** @return the next record, or null at the end */
    Line next() throws IOException {
        if (eof) {
            return null;
        }
        long start = line;
        List<String> fields = new ArrayList<>();
        StringBuilder f = new StringBuilder();
        boolean quoted = false;
        boolean wasQuoted = false;
        int c = in.read();
        if (c < 0) {
            eof = true;
            return null;
        }
        while (true) {
            if (c < 0) {
                if (quoted) {
                    throw new BadInputException(file + ": line " + start + ": a quoted value is not closed before the"
                            + " end of the file");
                }
                fields.add(f.toString());
                eof = true;
                return new Line(start, fields);
            }
            char ch = (char) c;
            if (quoted) {
                if (ch == '"') {
                    int n = in.read();
                    if (n == '"') {
                        f.append('"');
                    } else {
                        quoted = false;
                        c = n;
                        continue;
                    }
                } else {
                    if (ch == '\n') {
                        line++;
                    }
                    f.append(ch);
                }
            } else if (ch == ',') {
                fields.add(f.toString());
                f.setLength(0);
                wasQuoted = false;
            } else if (ch == '\n' || ch == '\r') {
                if (ch == '\r') {
                    in.mark(1);
                    if (in.read() != '\n') {
                        in.reset();
                    }
                }
                line++;
                fields.add(f.toString());
                return new Line(start, fields);
            } else if (ch == '"' && f.length() == 0 && !wasQuoted) {
                quoted = true;
                wasQuoted = true;
            } else {
                f.append(ch);
            }
            c = in.read();
        }
    }
}
