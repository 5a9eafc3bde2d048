package io.flywheel.lake;

import static io.flywheel.lake.TableSchemas.*;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;

import org.apache.arrow.vector.types.pojo.Field;
import org.junit.jupiter.api.Test;

/** The column constants name the columns of the schemas, in schema order. */
class TableSchemasTest {
    private static List<String> names(List<Field> fields) {
        return fields.stream().map(Field::getName).toList();
    }

    @Test
    void everyColumnConstantNamesItsColumn() {
        assertEquals(List.of(URI, BYTES, SHA256, FORMAT, RECORDING_ID, ROBOT_ID, RECORDED_AT_NS, TOPICS, INGEST_STATUS,
                INGESTED_AT_NS), names(rawFiles().getFields()));
        assertEquals(List.of(EPISODE_ID, RECORDING_ID, ROBOT_ID, TASK, SCENE, OPERATOR, OUTCOME, START_NS, END_NS,
                DURATION_NS, MASTER_TOPIC, FRAME_COUNT, QUALITY_STATUS, QUALITY_FLAGS, QUALITY_METRICS, METADATA,
                ENRICHED_AT_NS, ENRICHMENT, STATE_NAMES, ACTION_NAMES), names(episodes().getFields()));
        assertEquals(List.of(EPISODE_ID, FRAME_INDEX, TIMESTAMP_NS, STATE, ACTION, GRIPPER, IMAGES, STREAMS, FLAGS,
                GRIPPER_STATE, PHASE), names(frames().getFields()));
        assertEquals(List.of(IMAGE_TOPIC, IMAGE_RAW_URI, IMAGE_CHUNK_OFFSET, IMAGE_OFFSET, IMAGE_LENGTH,
                IMAGE_COMPRESSION, IMAGE_RESIDUAL_NS, IMAGE_FORMAT, IMAGE_WIDTH, IMAGE_HEIGHT, IMAGE_SHARPNESS,
                IMAGE_BLURRY, IMAGE_MEAN_ABS_DIFF, IMAGE_IS_STATIC, IMAGE_PHASH, IMAGE_HOT_JPEG, IMAGE_DECODE_ERROR),
                names(frames().findField(IMAGES).getChildren().get(0).getChildren()));
        assertEquals(List.of(STREAM_NAME, STREAM_MATCHED, STREAM_RESIDUAL_NS),
                names(frames().findField(STREAMS).getChildren().get(0).getChildren()));
        assertEquals(List.of(QUALITY_STATUS, QUALITY_FLAGS, QUALITY_METRICS), QUALITY_COLUMNS);
    }
}
