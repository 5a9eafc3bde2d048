package io.flywheel.lake;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ObjectNode;

import io.flywheel.error.BadInputException;
import io.flywheel.error.NotFoundException;

/**
 * The lake's commit points, {@code _lake/commits/<seq, 20 digits>.json}, one {@link LakeSnapshot} each, created with
 * the store's put-if-absent so that exactly one transaction wins each sequence number. {@code _lake/HEAD} holds the
 * newest sequence number as a hint (written after the commit point, possibly stale or missing): readers start there
 * and list the commit points after it, as Iceberg readers use {@code version-hint.text}.
 */
final class CommitLog {
    /** Version of the commit point file format. */
    static final int FORMAT = 1;
    static final String COMMITS = "commits/";
    static final String HEAD = "HEAD";
    private static final ObjectMapper JSON = new ObjectMapper()
            .setPropertyNamingStrategy(PropertyNamingStrategies.SNAKE_CASE)
            .configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false)
            .enable(SerializationFeature.INDENT_OUTPUT);

    private final MetaStore store;

    CommitLog(MetaStore store) {
        this.store = store;
    }

    MetaStore store() {
        return store;
    }

    static String key(long seq) {
        return COMMITS + String.format(Locale.ROOT, "%020d", seq) + ".json";
    }

    /** @return the newest commit point, or empty when there is none (not a lake, or a lake of schema version 2) */
    Optional<LakeSnapshot> latest() {
        long hint = 0;
        byte[] h = store.read(HEAD);
        if (h != null) {
            try {
                hint = Long.parseLong(new String(h, java.nio.charset.StandardCharsets.UTF_8).strip());
            } catch (NumberFormatException e) {
                hint = 0; // a damaged hint only costs a full listing
            }
        }
        List<String> after = store.list(COMMITS, hint > 0 ? key(hint) : null);
        long newest = hint;
        for (String k : after) {
            newest = Math.max(newest, seqOf(k));
        }
        if (newest == 0) {
            return Optional.empty();
        }
        if (newest == hint && store.read(key(hint)) == null) { // a hint beyond the log (restored lake): list all
            newest = 0;
            for (String k : store.list(COMMITS, null)) {
                newest = Math.max(newest, seqOf(k));
            }
            if (newest == 0) {
                return Optional.empty();
            }
        }
        return Optional.of(read(newest));
    }

    /**
     * @return the snapshot with that sequence number
     * @throws NotFoundException when there is none
     * @throws BadInputException naming the file when it cannot be read as a commit point
     */
    LakeSnapshot read(long seq) {
        byte[] b = store.read(key(seq));
        if (b == null) {
            throw new NotFoundException("no lake commit " + seq + " (" + store.describe(key(seq)) + " is missing)");
        }
        try {
            if (!(JSON.readTree(b) instanceof ObjectNode n)) {
                throw damaged(seq, b, "not a JSON object");
            }
            int format = n.path("format").asInt(-1);
            if (format != FORMAT) {
                throw new BadInputException("lake commit point " + store.describe(key(seq)) + " has format " + format
                        + "; this Flywheel reads format " + FORMAT);
            }
            n.remove("format");
            LakeSnapshot s = JSON.treeToValue(n, LakeSnapshot.class);
            if (s.seq() != seq || s.tables() == null) {
                throw new BadInputException("lake commit point " + store.describe(key(seq)) + " names sequence number "
                        + s.seq() + ", expected " + seq);
            }
            return s;
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            com.fasterxml.jackson.core.JsonLocation at = e.getLocation();
            String where = at == null || at.getLineNr() < 0 ? "" : " at line " + at.getLineNr() + ", column "
                    + at.getColumnNr();
            String field = e instanceof com.fasterxml.jackson.databind.JsonMappingException m && !m.getPath().isEmpty()
                    ? " in field '" + m.getPath().get(m.getPath().size() - 1).getFieldName() + "'" : "";
            throw damaged(seq, b, (e instanceof com.fasterxml.jackson.core.io.JsonEOFException
                    || String.valueOf(e.getOriginalMessage()).startsWith("Unexpected end-of-input")
                    ? "it ends early" : "unreadable JSON" + field) + where, e);
        } catch (IOException | IllegalArgumentException | NullPointerException e) {
            throw damaged(seq, b, "unreadable", e);
        }
    }

    /**
     * @return the error for a commit point that cannot be read: its file, what is wrong, and how to open the lake at
     *     the commit before it
     */
    private BadInputException damaged(long seq, byte[] b, String what, Exception cause) {
        String file = store.describe(key(seq));
        return new BadInputException("lake commit point " + file + " is damaged (" + b.length + " bytes, " + what
                + "; expected a JSON commit point of format " + FORMAT + "). To open the lake at commit " + (seq - 1)
                + ", move this file out of " + store.describe(COMMITS) + "; the next commit to each table rolls back"
                + " the versions it named", cause);
    }

    private BadInputException damaged(long seq, byte[] b, String what) {
        return damaged(seq, b, what, null);
    }

    /** @return every sequence number, oldest first */
    List<Long> seqs() {
        List<Long> out = new ArrayList<>();
        for (String k : store.list(COMMITS, null)) {
            out.add(seqOf(k));
        }
        out.sort(null);
        return out;
    }

    /**
     * Writes the commit point if its sequence number is still free, then the head hint.
     *
     * @return false when another transaction committed this sequence number first
     */
    boolean publish(LakeSnapshot s) {
        ObjectNode n = JSON.valueToTree(s);
        ObjectNode out = JSON.createObjectNode();
        out.put("format", FORMAT);
        out.setAll(n);
        byte[] bytes;
        try {
            bytes = JSON.writeValueAsBytes(out);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        if (!store.putIfAbsent(key(s.seq()), bytes)) {
            return false;
        }
        try {
            store.put(HEAD, Long.toString(s.seq()).getBytes(java.nio.charset.StandardCharsets.UTF_8));
        } catch (RuntimeException e) {
            // the hint is only a shortcut; readers list past it
        }
        return true;
    }

    private long seqOf(String key) {
        String name = key.substring(key.lastIndexOf('/') + 1);
        if (!name.endsWith(".json")) {
            return 0;
        }
        try {
            return Long.parseLong(name.substring(0, name.length() - ".json".length()));
        } catch (NumberFormatException e) {
            return 0;
        }
    }
}
