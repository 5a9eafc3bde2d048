package io.flywheel.lake;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.apache.arrow.vector.ipc.WriteChannel;
import org.apache.arrow.vector.ipc.message.MessageSerializer;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.flywheel.rows.EpisodeRow;
import io.flywheel.rows.FrameRow;
import io.flywheel.rows.ImageEnrichment;

/**
 * The neutral read view: scans and takes hand over {@link RowBatch}es whose typed accessors return the values the
 * rows were written with (Fixtures' stated ground truth), nested columns included; a wrong accessor names the table,
 * version, column and position.
 */
class RowBatchTest {
    @TempDir
    Path dir;

    /** Episode 1 of 3 frames with camera 0 enriched: hot copy {FF D8 j}, pHash 100 + j, blurry on frame 1, vector. */
    private static EmbeddingModel enriched(Lake lake) {
        Fixtures.ingest(lake, 1, 3);
        EmbeddingModel m = lake.registerModel("m", 2, "sha");
        List<FrameRow> rows = new ArrayList<>();
        for (FrameRow r : Fixtures.frames(1, 3)) {
            int j = r.frameIndex();
            rows.add(r.withEnrichment(r.images(), List.of(new ImageEnrichment(2.5 * j, j == 1, null, false, 100L + j,
                    new byte[] {(byte) 0xFF, (byte) 0xD8, (byte) j}, Map.of("m", new float[] {0.6f, 0.8f * j}), null),
                    ImageEnrichment.failed("no")), "open", j == 2 ? "grasp" : null));
        }
        lake.begin("enrich").updateFrames(List.of("images", "gripper_state", "phase", m.column()), rows)
                .updateEpisodes(TableSchemas.episodeModelColumns(m),
                        List.of(Fixtures.episode(1, 3).withEmbedding("m", new float[] {1f, 0f}, 7L))).commit();
        return m;
    }

    @Test
    void typedAccessorsReadTheWrittenValues() {
        try (Lake lake = Lake.init(dir.resolve("lake"))) {
            EmbeddingModel m = enriched(lake);
            List<FrameRow> want = Fixtures.frames(1, 3);
            List<Integer> seen = new ArrayList<>();
            try (LakeTable t = lake.table("frames")) {
                t.scan(ScanRequest.builder().orderBy(ScanRequest.SortKey.asc("frame_index")).build(), b -> {
                    assertEquals(3, b.rowCount());
                    assertTrue(b.has("images") && !b.has("embedding"));
                    ColumnView images = b.column("images");
                    ColumnView img = images.items();
                    ColumnView hot = img.field("hot_jpeg");
                    ColumnView vectors = b.column(m.column());
                    for (int r = 0; r < b.rowCount(); r++) {
                        FrameRow f = want.get(r);
                        seen.add(b.column("frame_index").getInt(r));
                        assertEquals(f.episodeId(), b.column("episode_id").getString(r));
                        assertEquals(f.timestampNs(), b.column("timestamp_ns").getLong(r));
                        assertArrayEquals(f.state(), b.column("state").getDoubles(r));
                        assertEquals(f.flags(), b.column("flags").getStrings(r));
                        assertEquals(f.gripper() == null, b.column("gripper").isNull(r));
                        if (f.gripper() != null) {
                            assertEquals(f.gripper(), b.column("gripper").getDouble(r));
                        }
                        assertEquals(f.images(), b.imageLocators(r));
                        assertEquals(f.streams(), b.streamMatches(r));
                        assertEquals(2, images.listLength(r));
                        int cam0 = images.listStart(r);
                        assertEquals("/cam0", img.field("topic").getString(cam0));
                        assertEquals(100L + r, img.field("phash").getLong(cam0));
                        assertEquals(r == 1, img.field("blurry").getBoolean(cam0));
                        assertTrue(img.field("phash").isNull(cam0 + 1), "camera 1 failed to decode");
                        assertEquals("no", img.field("decode_error").getString(cam0 + 1));
                        assertArrayEquals(new byte[] {(byte) 0xFF, (byte) 0xD8, (byte) r}, hot.getBytes(cam0));
                        ByteBuffer view = hot.getBytesView(cam0);
                        assertTrue(view.isReadOnly());
                        assertEquals(3, view.remaining());
                        assertEquals(r, view.get(2));
                        assertEquals(3, hot.getByteLength(cam0));
                        assertNull(hot.getBytesView(cam0 + 1));
                        assertEquals(2, vectors.listLength(r), "one vector entry per camera");
                        assertArrayEquals(new float[] {0.6f, 0.8f * r}, vectors.items().getFloats(vectors.listStart(r)));
                        assertNull(vectors.items().getFloats(vectors.listStart(r) + 1));
                        assertEquals(r == 2 ? "grasp" : null, b.column("phase").getString(r));
                    }
                });
                assertEquals(List.of(0, 1, 2), seen);
            }
            try (LakeTable e = lake.table("episodes")) {
                e.scan(ScanRequest.builder().columns("episode_id", m.column(), m.embeddedAtColumn()).build(), b -> {
                    assertArrayEquals(new float[] {1f, 0f}, b.column(m.column()).getFloats(0));
                    assertEquals(7L, b.column(m.embeddedAtColumn()).getLong(0));
                    assertEquals(ValueKind.FIXED_SIZE_LIST, b.column(m.column()).kind());
                });
            }
        }
    }

    @Test
    void takeHandsRowsOverInTheOrderAskedAndRowsArePlainValues() {
        try (Lake lake = Lake.init(dir.resolve("lake"))) {
            enriched(lake);
            List<Integer> order = new ArrayList<>();
            List<Map<String, Object>> rows = new ArrayList<>();
            try (LakeTable t = lake.table("frames")) {
                t.take(new long[] {2, 0}, List.of("frame_index", "state", "gripper", "streams", "images"), b -> {
                    for (int r = 0; r < b.rowCount(); r++) {
                        order.add(b.column("frame_index").getInt(r));
                        rows.add(b.row(r));
                    }
                });
            }
            assertEquals(List.of(2, 0), order);
            Map<String, Object> f0 = rows.get(1);
            assertEquals(List.of("frame_index", "state", "gripper", "streams", "images"), List.copyOf(f0.keySet()));
            assertEquals(0, f0.get("frame_index"));
            assertEquals(List.of(1.0, 0.0, 0.0), f0.get("state"), "state = {i, j, i*j} of episode 1, frame 0");
            assertEquals(0.0, f0.get("gripper"));
            assertNull(rows.get(0).get("gripper"), "frame 2 has no gripper match");
            @SuppressWarnings("unchecked")
            Map<String, Object> stream = ((List<Map<String, Object>>) f0.get("streams")).get(0);
            assertEquals(Map.of("stream", "/joint_states", "matched", true, "residual_ns", 0L), stream);
            @SuppressWarnings("unchecked")
            Map<String, Object> cam0 = ((List<Map<String, Object>>) f0.get("images")).get(0);
            assertEquals("/cam0", cam0.get("topic"));
            assertEquals(-1L, cam0.get("chunk_offset"));
            assertArrayEquals(new byte[] {(byte) 0xFF, (byte) 0xD8, 0}, (byte[]) cam0.get("hot_jpeg"));
        }
    }

    @Test
    void aWrongAccessorNamesTheTableVersionColumnAndPosition() {
        try (Lake lake = Lake.init(dir.resolve("lake"))) {
            Fixtures.ingest(lake, 1, 3);
            try (LakeTable t = lake.table("frames")) {
                String where = "frames.lance at version " + t.version();
                t.scan(ScanRequest.builder().columns("episode_id", "gripper", "images").build(), b -> {
                    LakeFormatException kind = assertThrows(LakeFormatException.class,
                            () -> b.column("episode_id").getLong(0));
                    assertTrue(kind.getMessage().contains(where) && kind.getMessage().contains("column episode_id is utf8,"
                            + " not int64 (position 0)"), kind.getMessage());
                    LakeFormatException missing = assertThrows(LakeFormatException.class, () -> b.column("state"));
                    assertTrue(missing.getMessage().contains("no column 'state'") && missing.getMessage().contains(
                            "[episode_id, gripper, images]"), missing.getMessage());
                    LakeFormatException nul = assertThrows(LakeFormatException.class, () -> b.column("gripper")
                            .getDouble(2));
                    assertTrue(nul.getMessage().contains("column gripper is null at position 2"), nul.getMessage());
                    LakeFormatException field = assertThrows(LakeFormatException.class,
                            () -> b.column("images").items().field("nope"));
                    assertTrue(field.getMessage().contains("column images.item has no field 'nope'"), field.getMessage());
                });
            }
        }
    }

    @Test
    void tableColumnsAreDescribedWithTheirDocs() {
        try (Lake lake = Lake.init(dir.resolve("lake"))) {
            EmbeddingModel m = enriched(lake);
            try (LakeTable e = lake.table("episodes"); LakeTable f = lake.table("frames")) {
                assertEquals("fixed_size_list<float32, 2>", e.column(m.column()).typeName());
                assertEquals("list<fixed_size_list<float32, 2>>", f.column(m.column()).typeName());
                ColumnSpec id = e.column("episode_id");
                assertFalse(id.nullable());
                assertEquals("episode identifier, deterministic from the content hash", id.doc());
                assertEquals(TableSchemas.frames().getFields().size() + 1, f.columns().size());
                ColumnSpec images = f.column("images");
                assertEquals(TableSchemas.IMAGE_FIELDS.stream().map(Field::getName).toList(),
                        images.item().children().stream().map(ColumnSpec::name).toList());
                assertEquals(ValueKind.BINARY, images.item().field("hot_jpeg").kind());
                assertTrue(e.hasColumn(m.embeddedAtColumn()) && !e.hasColumn("embedding"));
                io.flywheel.error.NotFoundException none = assertThrows(io.flywheel.error.NotFoundException.class,
                        () -> e.column("embedding"));
                assertTrue(none.getMessage().contains("has no column 'embedding'"), none.getMessage());
            }
        }
    }

    @Test
    void theArrowSchemaMessageIsArrowsOwn() throws Exception {
        ArrowType f64 = new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE);
        Schema arrow = new Schema(List.of(
                new Field("index", FieldType.notNullable(new ArrowType.Int(64, true)), null),
                new Field("observation.state", FieldType.notNullable(new ArrowType.FixedSizeList(7)),
                        List.of(new Field("item", FieldType.notNullable(new ArrowType.FloatingPoint(
                                FloatingPointPrecision.SINGLE)), null))),
                new Field("task", FieldType.notNullable(ArrowType.Utf8.INSTANCE), null),
                new Field("stats", FieldType.notNullable(ArrowType.List.INSTANCE), List.of(new Field("item",
                        FieldType.notNullable(ArrowType.List.INSTANCE), List.of(new Field("item",
                                FieldType.notNullable(f64), null)))))));
        ByteArrayOutputStream want = new ByteArrayOutputStream();
        MessageSerializer.serialize(new WriteChannel(Channels.newChannel(want)), arrow);
        byte[] got = ArrowSchemaMessage.serialize(List.of(ColumnSpec.of("index", ValueKind.INT64, false),
                ColumnSpec.fixedSizeList("observation.state", false, 7, ColumnSpec.of("item", ValueKind.FLOAT32, false)),
                ColumnSpec.of("task", ValueKind.UTF8, false),
                ColumnSpec.list("stats", false, ColumnSpec.list("item", false,
                        ColumnSpec.of("item", ValueKind.FLOAT64, false)))));
        assertArrayEquals(want.toByteArray(), got);
        assertThrows(IllegalArgumentException.class, () -> ColumnSpec.fixedSizeList("v", true, 0,
                ColumnSpec.of("item", ValueKind.FLOAT32, true)), "a fixed-size list needs a size");
    }

    @Test
    void episodesReadThroughTheViewMatchTheTypedRows() {
        try (Lake lake = Lake.init(dir.resolve("lake"))) {
            Fixtures.ingest(lake, 0, 2);
            EpisodeRow e = Fixtures.episode(0, 2);
            try (LakeTable t = lake.table("episodes")) {
                t.scan(ScanRequest.builder().columns("episode_id", "task", "frame_count", "quality_flags").build(), b -> {
                    assertEquals(e.episodeId(), b.column("episode_id").getString(0));
                    assertEquals("pick 'cube'", b.column("task").getString(0));
                    assertEquals(2L, b.column("frame_count").getLong(0));
                    assertNull(b.column("quality_flags").getStrings(0), "null before quality rules ran");
                    assertEquals(ValueKind.LIST, b.column("quality_flags").kind());
                });
            }
        }
    }
}
