package io.flywheel.lake;

import java.util.List;

import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;

import io.flywheel.rows.TelemetryRow;

/**
 * The fleet tables of a lake, typed: written by the fleet gateway through {@link LakeTransaction}, read with
 * {@link LakeTable#rows}.
 *
 * <h2>telemetry</h2> One {@link TelemetryRow} per MQTT message a robot published on
 * {@code fleet/<robot>/<class>/<kind>}, appended in micro-batches (one lake commit each). Created by the first batch
 * written to a lake (a lake made before it has no table until then; readers treat that as empty). Key:
 * {@code (robot_id, message_id)}, unique for QoS 1 and 2 messages (the gateway deduplicates redeliveries).
 * <ul>
 *   <li>robot_id utf8 not null; ts_ns int64 not null (robot clock, ns since epoch); received_ns int64 not null
 *       (gateway clock, ns since epoch)</li>
 *   <li>kind utf8 not null (the topic's last level: heartbeat, battery, joint_temp, estop, ...); message_class utf8
 *       not null (telemetry | alert | audit, the topic's class level); qos int32 not null (0, 1, 2: as delivered)</li>
 *   <li>message_id utf8 (null only for a QoS 0 message without one); topic utf8 not null</li>
 *   <li>values list&lt;struct&lt;name utf8 not null, value float64 not null&gt;&gt; (the readings, in payload
 *       order: a list of structs rather than a map, which every Lance and LanceDB reader takes)</li>
 *   <li>text utf8; episode_id utf8 (alerts: the episode the robot was recording at ts_ns; null until linked)</li>
 * </ul>
 */
public final class FleetTables {
    private FleetTables() {}

    /** The telemetry table's name. */
    public static final String TELEMETRY = "telemetry";

    // Columns (robot_id and episode_id as in TableSchemas):
    public static final String TS_NS = "ts_ns";
    public static final String RECEIVED_NS = "received_ns";
    public static final String KIND = "kind";
    public static final String MESSAGE_CLASS = "message_class";
    public static final String QOS = "qos";
    public static final String MESSAGE_ID = "message_id";
    public static final String TOPIC = "topic";
    public static final String VALUES = "values";
    /** The fields of a {@code values} entry. */
    public static final String VALUE_NAME = "name";
    public static final String VALUE = "value";
    public static final String TEXT = "text";

    /** The column a link of alerts to episodes writes. */
    public static final List<String> LINK_COLUMNS = List.of(TableSchemas.EPISODE_ID);

    static final Schema TELEMETRY_SCHEMA = new Schema(List.of(
            TableSchemas.field(TableSchemas.ROBOT_ID, TableSchemas.UTF8, false, "robot identifier, from the topic"),
            TableSchemas.field(TS_NS, TableSchemas.I64, false, "when the robot made the message, int64 ns since Unix"
                    + " epoch, robot clock"),
            TableSchemas.field(RECEIVED_NS, TableSchemas.I64, false, "when the gateway received it, int64 ns since Unix"
                    + " epoch, gateway clock"),
            TableSchemas.field(KIND, TableSchemas.UTF8, false, "heartbeat | battery | joint_temp | estop | ... (the"
                    + " topic's last level)"),
            TableSchemas.field(MESSAGE_CLASS, TableSchemas.UTF8, false, "telemetry | alert | audit (the topic's class"
                    + " level)"),
            TableSchemas.field(QOS, TableSchemas.I32, false, "MQTT QoS it was delivered with: 0, 1 or 2"),
            TableSchemas.field(MESSAGE_ID, TableSchemas.UTF8, true, "the robot's message id, unique per robot; null"
                    + " only for a QoS 0 message without one"),
            TableSchemas.field(TOPIC, TableSchemas.UTF8, false, "MQTT topic"),
            TableSchemas.list(VALUES, new Field("item", FieldType.notNullable(ArrowType.Struct.INSTANCE), List.of(
                    TableSchemas.field(VALUE_NAME, TableSchemas.UTF8, false, "reading name, e.g. voltage"),
                    TableSchemas.field(VALUE, TableSchemas.F64, false, "reading value, in the robot's unit"))),
                    "named readings, in payload order"),
            TableSchemas.field(TEXT, TableSchemas.UTF8, true, "free text: an alert's description, an audit record"),
            TableSchemas.field(TableSchemas.EPISODE_ID, TableSchemas.UTF8, true, "alerts: the episode the robot was"
                    + " recording at ts_ns; null until linked")));

    /** The telemetry table: one row per MQTT message. */
    public static final TypedTable<TelemetryRow> TELEMETRY_TABLE = new TypedTable<>(TELEMETRY,
            m -> TELEMETRY_SCHEMA, FleetRows::telemetry, FleetRows::telemetry);
}
