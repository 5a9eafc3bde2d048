package io.flywheel.fleet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.flywheel.error.BadInputException;
import io.flywheel.error.NotFoundException;
import io.flywheel.fleet.auth.RobotTokens;
import io.flywheel.fleet.upload.UploadIds;
import io.flywheel.lake.Lake;

/** Tokens in the lake property: hashed with a salt, one commit per change, verified and revoked. */
class RobotTokensTest {
    @TempDir
    Path tmp;

    @Test
    void tokensAreStoredSaltedAndHashedAndCanBeRevoked() throws Exception {
        try (Lake lake = Lake.init(tmp.resolve("lake"))) {
            long before = lake.snapshot().seq();
            RobotTokens.Issued a = RobotTokens.add(lake, "arm-1");
            RobotTokens.Issued b = RobotTokens.add(lake, "arm-2");
            assertEquals(before + 2, b.lakeCommit());
            assertTrue(a.token().matches("fwt_[0-9a-f]{12}\\.[A-Za-z0-9_-]{43}"), a.token());
            String json = lake.refresh().properties().get(RobotTokens.PROPERTY);
            String secret = a.token().substring(a.token().indexOf('.') + 1);
            assertFalse(json.contains(secret), "the secret is not stored");
            // the stored hash is SHA-256(salt || secret), by hand
            JsonNode e = new ObjectMapper().readTree(json).get(a.id());
            var md = UploadIds.sha256();
            md.update(HexFormat.of().parseHex(e.get("salt").asText()));
            md.update(secret.getBytes(StandardCharsets.UTF_8));
            assertEquals(HexFormat.of().formatHex(md.digest()), e.get("sha256").asText());
            assertEquals("arm-1", e.get("robot_id").asText());

            RobotTokens t = RobotTokens.of(lake);
            assertEquals(Optional.of("arm-1"), t.verify(a.token()));
            assertEquals(Optional.of("arm-2"), t.verify(b.token()));
            assertEquals(Optional.empty(), t.verify(a.token() + "x"));
            assertEquals(Optional.empty(), t.verify("Bearer " + a.token()));
            assertEquals(List.of(a.id(), b.id()).stream().sorted().toList(),
                    t.list().stream().map(RobotTokens.TokenInfo::id).toList());

            List<RobotTokens.TokenInfo> gone = RobotTokens.revoke(lake, List.of(a.id()), List.of());
            assertEquals(List.of("arm-1"), gone.stream().map(RobotTokens.TokenInfo::robotId).toList());
            assertEquals(Optional.empty(), RobotTokens.of(lake).verify(a.token()));
            assertEquals(Optional.of("arm-2"), RobotTokens.of(lake).verify(b.token()));
            NotFoundException nf = assertThrows(NotFoundException.class,
                    () -> RobotTokens.revoke(lake, List.of(a.id()), List.of()));
            assertTrue(nf.getMessage().contains("no gateway token '" + a.id() + "'"), nf.getMessage());
            assertThrows(BadInputException.class, () -> RobotTokens.add(lake, "../etc"));
        }
    }
}
