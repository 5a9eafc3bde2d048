package io.flywheel.fleet.auth;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collection;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;

import io.flywheel.error.BadInputException;
import io.flywheel.error.NotFoundException;
import io.flywheel.fleet.upload.UploadIds;
import io.flywheel.lake.CommitConflictException;
import io.flywheel.lake.Lake;

/**
 * The robots' gateway tokens of a lake, in the lake property {@value #PROPERTY}: a JSON object from token id to
 * {@link Entry} (robot id, a random 16-byte salt and SHA-256(salt || secret), both hex, and when it was issued). The
 * token itself, {@code fwt_<id>.<secret>} (id: 12 hex digits; secret: 32 random bytes, base64url), is shown once
 * when it is issued and never stored. Changes are lake transactions ({@code gateway-token}) that set the property
 * only if no other commit changed it meanwhile (retried on a conflict), so two issuers never drop each other's
 * tokens, on a local or an S3 lake alike.
 */
public final class RobotTokens {
    /** The lake property holding the tokens' hashes. */
    public static final String PROPERTY = "flywheel.fleet.tokens";
    /** Prefix of every token. */
    public static final String PREFIX = "fwt_";

    private static final ObjectMapper JSON = new ObjectMapper()
            .setPropertyNamingStrategy(PropertyNamingStrategies.SNAKE_CASE);
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final int ATTEMPTS = 8;

    /**
     * One stored token.
     *
     * @param robotId the robot it authenticates
     * @param salt 16 random bytes, hex
     * @param sha256 SHA-256(salt bytes || secret as UTF-8), hex
     * @param createdAtNs when it was issued, ns since the Unix epoch
     */
    public record Entry(String robotId, String salt, String sha256, long createdAtNs) {}

    /**
     * A token as listed: everything but the secret.
     *
     * @param id the token id (the part between {@code fwt_} and the dot)
     * @param robotId the robot it authenticates
     * @param createdAtNs when it was issued, ns since the Unix epoch
     */
    public record TokenInfo(String id, String robotId, long createdAtNs) {}

    /**
     * A token just issued.
     *
     * @param id its id
     * @param robotId its robot
     * @param token the bearer token, {@code fwt_<id>.<secret>}: shown once, not stored
     * @param lakeCommit the lake commit that stored its hash
     */
    public record Issued(String id, String robotId, String token, long lakeCommit) {}

    private final Map<String, Entry> entries;

    private RobotTokens(Map<String, Entry> entries) {
        this.entries = entries;
    }

    /**
     * @param properties a lake snapshot's properties
     * @return the tokens they hold (none when the property is absent)
     * @throws BadInputException when the property is not a token registry
     */
    public static RobotTokens of(Map<String, String> properties) {
        String json = properties.get(PROPERTY);
        if (json == null || json.isBlank()) {
            return new RobotTokens(new TreeMap<>());
        }
        try {
            Map<String, Entry> m = JSON.readValue(json, new TypeReference<TreeMap<String, Entry>>() { });
            return new RobotTokens(m);
        } catch (JsonProcessingException e) {
            throw new BadInputException("lake property " + PROPERTY + " is not a token registry: " + e.getOriginalMessage());
        }
    }

    /** @return the tokens of the lake's newest snapshot */
    public static RobotTokens of(Lake lake) {
        return of(lake.refresh().properties());
    }

    /**
     * Issues a new token for a robot (a robot may hold several: rotate by adding one, then revoking the old).
     *
     * @param lake the lake
     * @param robotId the robot
     * @return the token, to hand to the robot once
     * @throws BadInputException when the robot id is not valid
     */
    public static Issued add(Lake lake, String robotId) {
        return add(lake, List.of(robotId)).get(0);
    }

    /**
     * Issues a new token for each robot, all in one lake commit (a simulated fleet, a batch of new robots).
     *
     * @param lake the lake
     * @param robotIds the robots, at least one
     * @return the tokens, in the order of {@code robotIds}
     * @throws BadInputException when a robot id is not valid (nothing is issued then)
     */
    public static List<Issued> add(Lake lake, List<String> robotIds) {
        if (robotIds.isEmpty()) {
            throw new IllegalArgumentException("no robot to issue a token for");
        }
        for (String robotId : robotIds) {
            String bad = UploadIds.checkRobotId(robotId);
            if (bad != null) {
                throw new BadInputException(bad);
            }
        }
        Map<String, Entry> entries = new LinkedHashMap<>();
        List<String[]> issued = new ArrayList<>(); // id, robot, token
        for (String robotId : robotIds) {
            byte[] idBytes = new byte[6];
            byte[] secretBytes = new byte[32];
            byte[] salt = new byte[16];
            RANDOM.nextBytes(idBytes);
            RANDOM.nextBytes(secretBytes);
            RANDOM.nextBytes(salt);
            String id = HexFormat.of().formatHex(idBytes);
            String secret = Base64.getUrlEncoder().withoutPadding().encodeToString(secretBytes);
            entries.put(id, new Entry(robotId, HexFormat.of().formatHex(salt), hash(salt, secret),
                    System.currentTimeMillis() * 1_000_000L));
            issued.add(new String[] {id, robotId, PREFIX + id + "." + secret});
        }
        long seq = change(lake, "add " + String.join(" ", entries.keySet()), m -> m.putAll(entries));
        List<Issued> out = new ArrayList<>();
        for (String[] t : issued) {
            out.add(new Issued(t[0], t[1], t[2], seq));
        }
        return out;
    }

    /**
     * Revokes tokens: those with the given ids, and every token of the given robots.
     *
     * @param lake the lake
     * @param ids token ids (or whole tokens)
     * @param robots robot ids
     * @return the tokens revoked
     * @throws NotFoundException when an id or robot has no token (nothing is revoked then)
     */
    public static List<TokenInfo> revoke(Lake lake, Collection<String> ids, Collection<String> robots) {
        List<TokenInfo> out = new ArrayList<>();
        change(lake, "revoke", m -> {
            out.clear();
            for (String given : ids) {
                String id = idOf(given);
                Entry e = m.remove(id);
                if (e == null) {
                    throw new NotFoundException("no gateway token '" + id + "' in " + lake.location() + "; tokens: "
                            + (m.isEmpty() ? "none" : String.join(", ", m.keySet())));
                }
                out.add(new TokenInfo(id, e.robotId(), e.createdAtNs()));
            }
            for (String robot : robots) {
                boolean any = false;
                for (var it = m.entrySet().iterator(); it.hasNext(); ) {
                    var en = it.next();
                    if (en.getValue().robotId().equals(robot)) {
                        out.add(new TokenInfo(en.getKey(), robot, en.getValue().createdAtNs()));
                        it.remove();
                        any = true;
                    }
                }
                if (!any) {
                    throw new NotFoundException("robot '" + robot + "' has no gateway token in " + lake.location());
                }
            }
        });
        return out;
    }

    /** @return every token, by id */
    public List<TokenInfo> list() {
        List<TokenInfo> out = new ArrayList<>();
        entries.forEach((id, e) -> out.add(new TokenInfo(id, e.robotId(), e.createdAtNs())));
        return out;
    }

    /**
     * @param token a bearer token as a robot sent it
     * @return the robot it authenticates, or empty when it is malformed, unknown or revoked
     */
    public Optional<String> verify(String token) {
        if (token == null || !token.startsWith(PREFIX)) {
            return Optional.empty();
        }
        int dot = token.indexOf('.');
        if (dot < 0) {
            return Optional.empty();
        }
        Entry e = entries.get(token.substring(PREFIX.length(), dot));
        if (e == null) {
            return Optional.empty();
        }
        byte[] salt;
        try {
            salt = HexFormat.of().parseHex(e.salt());
        } catch (IllegalArgumentException bad) {
            return Optional.empty();
        }
        byte[] want = HexFormat.of().parseHex(e.sha256());
        byte[] got = HexFormat.of().parseHex(hash(salt, token.substring(dot + 1)));
        return MessageDigest.isEqual(want, got) ? Optional.of(e.robotId()) : Optional.empty();
    }

    private static String idOf(String given) {
        if (given.startsWith(PREFIX)) {
            int dot = given.indexOf('.');
            return given.substring(PREFIX.length(), dot < 0 ? given.length() : dot);
        }
        return given;
    }

    private static String hash(byte[] salt, String secret) {
        MessageDigest md = UploadIds.sha256();
        md.update(salt);
        md.update(secret.getBytes(StandardCharsets.UTF_8));
        return HexFormat.of().formatHex(md.digest());
    }

    /** Applies {@code edit} to the newest registry and commits it, retrying when another commit changed it meanwhile. */
    private static long change(Lake lake, String what, java.util.function.Consumer<Map<String, Entry>> edit) {
        for (int attempt = 1; ; attempt++) {
            Map<String, Entry> m = new LinkedHashMap<>(of(lake).entries);
            edit.accept(m);
            String json;
            try {
                json = JSON.writeValueAsString(new TreeMap<>(m));
            } catch (JsonProcessingException e) {
                throw new IllegalStateException(e);
            }
            try {
                return lake.begin("gateway-token").summary("tokens", what).propertyIfUnchanged(PROPERTY, json).commit()
                        .snapshot().seq();
            } catch (CommitConflictException e) {
                if (attempt >= ATTEMPTS) {
                    throw e;
                }
                try {
                    Thread.sleep(20L * attempt);
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    throw e;
                }
            }
        }
    }
}
