package io.flywheel.lake;

import java.util.List;
import java.util.Map;

import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * The Arrow schemas of the lake's ingest tables, in one place, and the names of every table (the curation tables'
 * columns are {@link CurationTables}).
 *
 * <p>Units (see docs/ARCHITECTURE.md): every time is int64 nanoseconds since the Unix epoch
 * (ROS convention), every duration and residual is int64 nanoseconds, sizes and offsets are
 * bytes. Each field carries its unit and meaning in its Arrow metadata under the key
 * {@value #DOC_KEY}, so the schema documents itself in every Lance reader (Java, lancedb, Spark).
 *
 * <h2>raw_files</h2> One row per raw input file, never moved or rewritten. Key: {@code sha256}.
 * <ul>
 *   <li>uri: utf8, not null: where the file lives (absolute path or URI)</li>
 *   <li>bytes: int64, not null: file size in bytes</li>
 *   <li>sha256: utf8, not null: lower-case hex SHA-256 of the whole file; the idempotency key</li>
 *   <li>format: utf8, not null: {@code mcap}, {@code ros1bag}, {@code rosbag2} or {@code rlds}</li>
 *   <li>recording_id: utf8: shared by the files of one split recording</li>
 *   <li>robot_id: utf8</li>
 *   <li>recorded_at_ns: int64: start of the recording, ns since epoch</li>
 *   <li>topics: utf8 JSON: summary of topics (name, type, message count)</li>
 *   <li>ingest_status: utf8: {@code ok}, {@code partial}, {@code failed}</li>
 *   <li>ingested_at_ns: int64: when the ingest committed, ns since epoch</li>
 * </ul>
 *
 * <h2>episodes</h2> One row per episode. Key: {@code episode_id}.
 * episode_id, recording_id, robot_id, task, scene, operator, outcome (what the recording states, one of
 * {@link #OUTCOMES}): utf8; start_ns, end_ns (ns since epoch), duration_ns (ns): int64;
 * master_topic: utf8 (the master clock's topic, or {@code rate:<hz>} for a fixed rate);
 * frame_count: int64; quality_status: utf8 ({@code pass}, {@code warn}, {@code fail}, or null before
 * quality rules ran); quality_flags: list&lt;utf8&gt;; quality_metrics: utf8 JSON object;
 * metadata: utf8 JSON object for anything else. Written by enrich (null before): enriched_at_ns (int64; non-null
 * marks the episode's image metrics and frame labels done), enrichment (utf8 JSON: settings and counts). Per
 * embedding model ({@link EmbeddingModels}: the lake property {@code flywheel.models} names each model's dimension D,
 * file SHA-256 and column {@code emb_<key>}, {@code <key>} the model id made a column name), two columns added when
 * enrich first runs the model: {@code emb_<key>} fixed_size_list&lt;float32, D&gt; (the L2-normalised mean of the
 * master camera's keyframe embeddings; what LanceDB and {@link LakeTable#nearest} search, with an IVF-PQ index
 * {@code emb_<key>_ivf_pq} from 50,000 rows) and {@code emb_<key>_at_ns} int64 (when enrich committed that model's
 * embedding of the episode; null = not yet: the enrichment state per model). state_names, action_names:
 * list&lt;utf8&gt;, one name per value of the episode's frames' state / action vectors, in vector order (joint names,
 * field paths, {@code <topic>.<joint>} where two topics share a name); null when unknown. Added to a lake created
 * before them at its next ingest ({@link #VALUE_NAME_COLUMNS}: an additive change, no row rewritten).
 *
 * <h2>frames</h2> One row per master-clock tick of an episode. Key: {@code (episode_id,
 * frame_index)}; replaced as a whole episode.
 * <ul>
 *   <li>episode_id: utf8, not null</li>
 *   <li>frame_index: int32, not null: 0-based position in the episode</li>
 *   <li>timestamp_ns: int64, not null: master clock time, ns since epoch</li>
 *   <li>state: list&lt;float64&gt;: aligned state vector (joint positions in radians or metres,
 *       as the robot profile says), null when unmatched</li>
 *   <li>action: list&lt;float64&gt;: aligned action vector, null when unmatched</li>
 *   <li>gripper: float64: aligned gripper opening (0 closed .. 1 open, or metres), from a gripper topic, else from
 *       a state joint ({@code io.flywheel.ingest.GripperJoint}; episode metadata {@code gripper_joint})</li>
 *   <li>images: list&lt;struct&gt;, one per camera (N cameras fit): topic, raw_uri,
 *       chunk_offset (absolute file offset of the MCAP Chunk record, -1 when the range is plain),
 *       offset and length (bytes inside the decompressed chunk, or absolute file range when
 *       plain), compression (the chunk's: {@code ""}, {@code zstd}, {@code lz4}, {@code bz2}; then
 *       {@code +base64} or {@code +json:<path>} for JSON-encoded images), residual_ns
 *       (|image time - frame time|); format (utf8: jpeg, png or a raw encoding), width, height (int32
 *       pixels); and, written by enrich (null before): sharpness (float64, variance of the Laplacian),
 *       blurry (bool), mean_abs_diff (float64, to the previous frame of the camera), is_static (bool), phash
 *       (int64 pHash), hot_jpeg (binary, JPEG at training resolution), decode_error (utf8)</li>
 *   <li>streams: list&lt;struct&lt;stream utf8, matched bool, residual_ns int64&gt;&gt;: one entry
 *       per aligned stream; residual_ns null when unmatched</li>
 *   <li>flags: list&lt;utf8&gt;: e.g. {@code unmatched:/joint_states}</li>
 *   <li>gripper_state, phase: utf8, written by enrich (see {@code io.flywheel.enrich.motion.MotionLabeler})</li>
 *   <li>per embedding model, {@code emb_<key>}: list&lt;fixed_size_list&lt;float32, D&gt;&gt; aligned with
 *       {@code images} (one entry per camera, L2-normalised, null where that camera was not embedded); null for a
 *       frame the model did not embed (the stride did not select it)</li>
 * </ul>
 */
public final class TableSchemas {
    /** The values of {@code frames.phase}, in task order (enrich's {@code io.flywheel.enrich.motion.Phase} labels). */
    public static final java.util.List<String> PHASES = java.util.List.of("idle", "approach", "grasp", "lift", "place",
            "retreat");

    private TableSchemas() {}

    /** Field metadata key holding a field's meaning and unit. */
    public static final String DOC_KEY = "flywheel.doc";

    /**
     * Version of these schemas, a lake property ({@code flywheel.schema_version}). 3: lake-level commit points
     * ({@code _lake/commits/}) replace per-table commits and the {@code _catalog} table. 4: embeddings as fixed-size
     * lists, one column per model ({@code emb_<key>}), instead of {@code episodes.embedding},
     * {@code embedding_model}, {@code embedding_sha256} and {@code frames.images[].embedding} (list&lt;float32&gt;,
     * which vector search cannot use).
     */
    public static final int SCHEMA_VERSION = 4;

    /** Prefix of every embedding model's column ({@code emb_<key>}). */
    public static final String MODEL_COLUMN_PREFIX = "emb_";
    /** Suffix of a model's episodes column of commit times ({@code emb_<key>_at_ns}). */
    public static final String EMBEDDED_AT_SUFFIX = "_at_ns";

    public static final String RAW_FILES = "raw_files";
    public static final String EPISODES = "episodes";
    public static final String FRAMES = "frames";
    /** Curation tables ({@link CurationTables}): the training-set registry. */
    public static final String TRAINSETS = "trainsets";
    /** The episodes of a training set. */
    public static final String TRAINSET_EPISODES = "trainset_episodes";
    /** The samples of a training set. */
    public static final String TRAINSET_SAMPLES = "trainset_samples";
    /** The near-duplicate groups of episodes. */
    public static final String EPISODE_GROUPS = "episode_groups";
    /** The near-duplicate master-camera frames. */
    public static final String FRAME_GROUPS = "frame_groups";

    // Column names, declared once: the schemas below, the stages, the command line and the console name columns
    // with these. Columns of raw_files:
    public static final String URI = "uri";
    public static final String BYTES = "bytes";
    public static final String SHA256 = "sha256";
    public static final String FORMAT = "format";
    public static final String RECORDED_AT_NS = "recorded_at_ns";
    public static final String TOPICS = "topics";
    public static final String INGEST_STATUS = "ingest_status";
    public static final String INGESTED_AT_NS = "ingested_at_ns";
    // columns of episodes (recording_id and robot_id also of raw_files; episode_id also of frames):
    public static final String EPISODE_ID = "episode_id";
    public static final String RECORDING_ID = "recording_id";
    public static final String ROBOT_ID = "robot_id";
    public static final String TASK = "task";
    public static final String SCENE = "scene";
    public static final String OPERATOR = "operator";
    public static final String OUTCOME = "outcome";
    public static final String START_NS = "start_ns";
    public static final String END_NS = "end_ns";
    public static final String DURATION_NS = "duration_ns";
    public static final String MASTER_TOPIC = "master_topic";
    public static final String FRAME_COUNT = "frame_count";
    public static final String QUALITY_STATUS = "quality_status";
    public static final String QUALITY_FLAGS = "quality_flags";
    public static final String QUALITY_METRICS = "quality_metrics";
    public static final String METADATA = "metadata";
    public static final String ENRICHED_AT_NS = "enriched_at_ns";
    public static final String ENRICHMENT = "enrichment";
    public static final String STATE_NAMES = "state_names";
    public static final String ACTION_NAMES = "action_names";
    public static final String STREAM_OUTCOME = "stream_outcome";
    public static final String STREAM_RULE = "stream_rule";
    public static final String STREAM_RULES_VERSION = "stream_rules_version";
    public static final String STREAM_LABELLED_AT_NS = "stream_labelled_at_ns";
    public static final String STREAM_EPISODE_ID = "stream_episode_id";

    /**
     * The outcome vocabulary of {@code episodes.outcome} and {@code stream_outcome}: {@code success}, {@code failure}
     * (a recording may say {@code failure: <cause>}), {@code intervention} (the recording says an operator took
     * over), {@code needs_review} (a human should look: the stream's label for an operator intervention) and
     * {@code unknown}.
     */
    public static final List<String> OUTCOMES = List.of("success", "failure", "intervention", "needs_review", "unknown");

    /** The stream label's columns of {@code episodes} (nullable; present once a stream label was applied). */
    public static final List<String> STREAM_LABEL_COLUMNS = List.of(STREAM_OUTCOME, STREAM_RULE, STREAM_RULES_VERSION,
            STREAM_LABELLED_AT_NS, STREAM_EPISODE_ID);
    // columns of frames:
    public static final String FRAME_INDEX = "frame_index";
    public static final String TIMESTAMP_NS = "timestamp_ns";
    public static final String STATE = "state";
    public static final String ACTION = "action";
    public static final String GRIPPER = "gripper";
    public static final String IMAGES = "images";
    public static final String STREAMS = "streams";
    public static final String FLAGS = "flags";
    public static final String GRIPPER_STATE = "gripper_state";
    public static final String PHASE = "phase";
    // fields of one camera's struct in frames.images:
    public static final String IMAGE_TOPIC = "topic";
    public static final String IMAGE_RAW_URI = "raw_uri";
    public static final String IMAGE_CHUNK_OFFSET = "chunk_offset";
    public static final String IMAGE_OFFSET = "offset";
    public static final String IMAGE_LENGTH = "length";
    public static final String IMAGE_COMPRESSION = "compression";
    public static final String IMAGE_RESIDUAL_NS = "residual_ns";
    public static final String IMAGE_FORMAT = "format";
    public static final String IMAGE_WIDTH = "width";
    public static final String IMAGE_HEIGHT = "height";
    public static final String IMAGE_SHARPNESS = "sharpness";
    public static final String IMAGE_BLURRY = "blurry";
    public static final String IMAGE_MEAN_ABS_DIFF = "mean_abs_diff";
    public static final String IMAGE_IS_STATIC = "is_static";
    public static final String IMAGE_PHASH = "phash";
    public static final String IMAGE_HOT_JPEG = "hot_jpeg";
    public static final String IMAGE_DECODE_ERROR = "decode_error";
    // fields of one stream's struct in frames.streams:
    public static final String STREAM_NAME = "stream";
    public static final String STREAM_MATCHED = "matched";
    public static final String STREAM_RESIDUAL_NS = "residual_ns";

    /** The columns of {@code episodes} that quality rules write: status, fired rules, metrics and rule results. */
    public static final List<String> QUALITY_COLUMNS = List.of(QUALITY_STATUS, QUALITY_FLAGS, QUALITY_METRICS);

    /**
     * The columns of {@code episodes} that enrich writes for the image metrics and labels; each model's embedding is
     * written to its own two columns ({@link #episodeModelColumns}).
     */
    public static final List<String> EPISODE_ENRICHMENT_COLUMNS = List.of(ENRICHED_AT_NS, ENRICHMENT);

    /**
     * The columns of {@code frames} that enrich writes: {@code images} (each camera's locator keeps its values; its
     * size and enrichment fields are set) and the frame labels.
     */
    public static final List<String> FRAME_ENRICHMENT_COLUMNS = List.of(IMAGES, GRIPPER_STATE, PHASE);

    /** @return the episodes columns of a model's embedding: {@code emb_<key>}, {@code emb_<key>_at_ns} */
    public static List<String> episodeModelColumns(EmbeddingModel m) {
        return List.of(m.column(), m.embeddedAtColumn());
    }

    /**
     * @return {@code name: fixed_size_list<float32, dim>}, nullable, documented as the episode vector of {@code model}
     */
    static Field episodeVectorField(String name, int dim, String model) {
        return new Field(name, new FieldType(true, new ArrowType.FixedSizeList(dim), null, Map.of(DOC_KEY,
                "episode embedding of model " + model + ": float32[" + dim + "], L2-normalised mean of the master"
                        + " camera's keyframe embeddings; null before enrich ran the model or without a master image")),
                List.of(vectorItem()));
    }

    /** @return {@code name: int64}, nullable: when enrich committed {@code model}'s embedding of the episode */
    static Field embeddedAtField(String name, String model) {
        return field(name, I64, true, "when enrich committed the embedding of model " + model + ", int64 ns since"
                + " Unix epoch; null = the model has not embedded the episode yet");
    }

    /** @return {@code name: list<fixed_size_list<float32, dim>>}, aligned with {@code images} */
    static Field frameVectorsField(String name, int dim, String model) {
        Field fsl = new Field("item", new FieldType(true, new ArrowType.FixedSizeList(dim), null), List.of(vectorItem()));
        return new Field(name, new FieldType(true, ArrowType.List.INSTANCE, null, Map.of(DOC_KEY,
                "image embeddings of model " + model + ", one per camera in the order of images: float32[" + dim
                        + "], L2-normalised, null where the camera was not embedded; null when the frame was not")),
                List.of(fsl));
    }

    private static Field vectorItem() {
        return new Field("item", new FieldType(true, F32, null), null);
    }

    /** @return the episodes columns of a model, as fields */
    static List<Field> episodeModelFields(EmbeddingModel m) {
        return List.of(episodeVectorField(m.column(), m.dimension(), m.id()), embeddedAtField(m.embeddedAtColumn(),
                m.id()));
    }

    /** @return the stream label's columns of episodes, as nullable fields */
    static List<Field> streamLabelFields() {
        return List.of(field(STREAM_OUTCOME, UTF8, true, "the stream label: success | failure | needs_review"),
                field(STREAM_RULE, UTF8, true, "the labelling rule that decided the stream label"),
                field(STREAM_RULES_VERSION, UTF8, true, "the labelling rules' version"),
                field(STREAM_LABELLED_AT_NS, I64, true, "when the stream label was committed, int64 ns since Unix epoch"),
                field(STREAM_EPISODE_ID, UTF8, true, "the episode's id in the fleet stream (the robot's name of it)"));
    }

    /** @return the frames column of a model, as a field */
    static Field frameModelField(EmbeddingModel m) {
        return frameVectorsField(m.column(), m.dimension(), m.id());
    }

    /**
     * @param table {@link #EPISODES} or {@link #FRAMES} (other tables have no model columns)
     * @param models the lake's models
     * @return the table's schema with every model's columns after the fixed ones, in registry order
     */
    static Schema withModels(String table, EmbeddingModels models) {
        List<Field> fields = new java.util.ArrayList<>(of(table).getFields());
        for (EmbeddingModel m : models.all()) {
            if (table.equals(EPISODES)) {
                fields.addAll(episodeModelFields(m));
            } else if (table.equals(FRAMES)) {
                fields.add(frameModelField(m));
            }
        }
        return new Schema(fields);
    }

    /** The ingest tables, created by {@code init} and written with typed rows. */
    public static final List<String> CORE_TABLES = List.of(RAW_FILES, EPISODES, FRAMES);

    /** Every table a Flywheel lake may hold: the ingest tables, the curation tables, then the fleet tables. */
    public static final List<String> KNOWN_TABLES = List.of(RAW_FILES, EPISODES, FRAMES, EPISODE_GROUPS,
            FRAME_GROUPS, TRAINSETS, TRAINSET_EPISODES, TRAINSET_SAMPLES, FleetTables.TELEMETRY,
            StreamTables.LABEL_HISTORY);

    /**
     * @param table a table name
     * @throws IllegalArgumentException unless it is lower-case letters, digits and underscores, starting with a
     *     letter (a Lance dataset folder name that every reader accepts)
     */
    static void checkName(String table) {
        if (table == null || !table.matches("[a-z][a-z0-9_]*")) {
            throw new IllegalArgumentException("table name '" + table + "': expected lower-case letters, digits and"
                    + " underscores, starting with a letter");
        }
    }

    /** The replace key of each table: rows with a key already present are replaced on write. */
    public static final Map<String, String> REPLACE_KEY =
            Map.of(RAW_FILES, SHA256, EPISODES, EPISODE_ID, FRAMES, EPISODE_ID);

    static final ArrowType UTF8 = ArrowType.Utf8.INSTANCE;
    static final ArrowType I64 = new ArrowType.Int(64, true);
    static final ArrowType I32 = new ArrowType.Int(32, true);
    static final ArrowType F64 = new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE);
    static final ArrowType BOOL = ArrowType.Bool.INSTANCE;
    static final ArrowType F32 = new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE);
    static final ArrowType BINARY = ArrowType.Binary.INSTANCE;

    static Field field(String name, ArrowType type, boolean nullable, String doc) {
        return new Field(name, new FieldType(nullable, type, null, Map.of(DOC_KEY, doc)), null);
    }

    static Field list(String name, Field item, String doc) {
        return new Field(name, new FieldType(true, ArrowType.List.INSTANCE, null, Map.of(DOC_KEY, doc)),
                List.of(item));
    }

    static Field struct(String name, List<Field> children) {
        return new Field(name, new FieldType(false, ArrowType.Struct.INSTANCE, null), children);
    }

    private static final Schema RAW_FILES_SCHEMA = new Schema(List.of(
            field(URI, UTF8, false, "location of the raw file: absolute path or URI"),
            field(BYTES, I64, false, "file size, bytes"),
            field(SHA256, UTF8, false, "lower-case hex SHA-256 of the file content; idempotency key"),
            field(FORMAT, UTF8, false, "mcap | ros1bag | rosbag2 | rlds"),
            field(RECORDING_ID, UTF8, true, "recording this file belongs to (split recordings share it)"),
            field(ROBOT_ID, UTF8, true, "robot identifier"),
            field(RECORDED_AT_NS, I64, true, "recording start, int64 ns since Unix epoch"),
            field(TOPICS, UTF8, true, "JSON summary of topics: name, type, message count"),
            field(INGEST_STATUS, UTF8, true, "ok | partial | failed"),
            field(INGESTED_AT_NS, I64, true, "ingest commit time, int64 ns since Unix epoch")));

    private static final Schema EPISODES_SCHEMA = new Schema(List.of(
            field(EPISODE_ID, UTF8, false, "episode identifier, deterministic from the content hash"),
            field(RECORDING_ID, UTF8, true, "recording the episode comes from"),
            field(ROBOT_ID, UTF8, true, "robot identifier"),
            field(TASK, UTF8, true, "task text"),
            field(SCENE, UTF8, true, "scene"),
            field(OPERATOR, UTF8, true, "operator"),
            field(OUTCOME, UTF8, true, "success | failure | intervention | unknown"),
            field(START_NS, I64, true, "first frame time, int64 ns since Unix epoch"),
            field(END_NS, I64, true, "last frame time, int64 ns since Unix epoch"),
            field(DURATION_NS, I64, true, "end_ns - start_ns, int64 ns"),
            field(MASTER_TOPIC, UTF8, true, "master clock topic, or rate:<hz> for a fixed rate"),
            field(FRAME_COUNT, I64, true, "number of rows in frames for this episode"),
            field(QUALITY_STATUS, UTF8, true, "pass | warn | fail; null before quality rules ran"),
            list(QUALITY_FLAGS, field("item", UTF8, true, "flag"), "names of the quality rules that fired"),
            field(QUALITY_METRICS, UTF8, true, "JSON object of episode metrics"),
            field(METADATA, UTF8, true, "JSON object: anything else"),
            field(ENRICHED_AT_NS, I64, true, "when enrich committed this episode's image metrics and frame labels,"
                    + " int64 ns since Unix epoch; null = not enriched yet"),
            field(ENRICHMENT, UTF8, true, "JSON object: enrich settings (thresholds, stride) and per-episode counts"),
            stateNamesField(), actionNamesField()));

    private static Field stateNamesField() {
        return list(STATE_NAMES, field("item", UTF8, true, "name"), "one name per value of frames.state, in vector"
                + " order (joint names, field paths; <topic>.<name> where two topics share a name); null when unknown");
    }

    private static Field actionNamesField() {
        return list(ACTION_NAMES, field("item", UTF8, true, "name"), "one name per value of frames.action, in vector"
                + " order; null when unknown");
    }

    /**
     * The episodes columns of per-value names, added to a lake whose episodes table predates them
     * ({@link Lake#commit(io.flywheel.rows.RecordingRows)}): nullable, null in the rows already there.
     */
    static final List<Field> VALUE_NAME_COLUMNS = List.of(stateNamesField(), actionNamesField());

    /** Struct fields of one camera image locator inside {@code frames.images}. */
    static final List<Field> IMAGE_FIELDS = List.of(
            field(IMAGE_TOPIC, UTF8, false, "camera topic"),
            field(IMAGE_RAW_URI, UTF8, false, "raw file holding the image message"),
            field(IMAGE_CHUNK_OFFSET, I64, false,
                    "absolute file offset of the MCAP Chunk record; -1 when offset/length are a plain file range"),
            field(IMAGE_OFFSET, I64, false, "bytes: inside the decompressed chunk, or absolute file offset when plain"),
            field(IMAGE_LENGTH, I64, false, "bytes of the message data"),
            field(IMAGE_COMPRESSION, UTF8, false, "chunk compression: empty, zstd, lz4 or bz2 (ROS 1 bag chunk);"
                    + " then +base64 or +json:<field path> when the range holds base64 text or a JSON message"),
            field(IMAGE_RESIDUAL_NS, I64, true, "|image time - frame time|, int64 ns"),
            field(IMAGE_FORMAT, UTF8, true, "image format: jpeg, png (CompressedImage format string) or a raw"
                    + " sensor_msgs/Image encoding (rgb8, mono16, 16UC1, ...)"),
            field(IMAGE_WIDTH, I32, true, "image width in pixels (raw images: from ingest; compressed: from enrich)"),
            field(IMAGE_HEIGHT, I32, true, "image height in pixels"),
            field(IMAGE_SHARPNESS, F64, true, "variance of the Laplacian of the grey image, grey levels^2 (enrich)"),
            field(IMAGE_BLURRY, BOOL, true, "sharpness below the enrich blur threshold"),
            field(IMAGE_MEAN_ABS_DIFF, F64, true, "mean |grey - previous frame's grey| of 64-px thumbnails, grey levels"
                    + " 0..255; null for the first frame"),
            field(IMAGE_IS_STATIC, BOOL, true, "mean_abs_diff below the enrich static threshold"),
            field(IMAGE_PHASH, I64, true, "64-bit DCT perceptual hash (pHash), compare by Hamming distance"),
            field(IMAGE_HOT_JPEG, BINARY, true, "hot copy: JPEG at training resolution (longest side per enrich)"),
            field(IMAGE_DECODE_ERROR, UTF8, true, "why the image could not be read or decoded; null when it was"));

    /** Struct fields of one stream match inside {@code frames.streams}. */
    static final List<Field> STREAM_FIELDS = List.of(
            field(STREAM_NAME, UTF8, false, "stream (topic or role) name"),
            field(STREAM_MATCHED, BOOL, false, "whether a message matched within tolerance"),
            field(STREAM_RESIDUAL_NS, I64, true, "|message time - frame time|, int64 ns; null when unmatched"));

    private static final Schema FRAMES_SCHEMA = new Schema(List.of(
            field(EPISODE_ID, UTF8, false, "episode identifier"),
            field(FRAME_INDEX, I32, false, "0-based frame position in the episode"),
            field(TIMESTAMP_NS, I64, false, "master clock time, int64 ns since Unix epoch"),
            list(STATE, field("item", F64, true, "value"), "aligned state vector (units per robot profile)"),
            list(ACTION, field("item", F64, true, "value"), "aligned action vector (units per robot profile)"),
            field(GRIPPER, F64, true, "aligned gripper value; null when unmatched"),
            list(IMAGES, struct("item", IMAGE_FIELDS), "one image locator per camera"),
            list(STREAMS, struct("item", STREAM_FIELDS), "per-stream match and residual"),
            list(FLAGS, field("item", UTF8, true, "flag"), "frame flags, e.g. unmatched:<stream>"),
            field(GRIPPER_STATE, UTF8, true, "open | closing | closed | opening (enrich); null when unknown"),
            field(PHASE, UTF8, true, String.join(" | ", PHASES) + " (enrich); null when unknown")));

    /** @return the schema of raw_files */
    static Schema rawFiles() {
        return RAW_FILES_SCHEMA;
    }

    /** @return the schema of episodes */
    static Schema episodes() {
        return EPISODES_SCHEMA;
    }

    /** @return the schema of frames */
    static Schema frames() {
        return FRAMES_SCHEMA;
    }

    /**
     * @param table one of {@link #RAW_FILES}, {@link #EPISODES}, {@link #FRAMES}
     * @return its schema
     * @throws IllegalArgumentException for another name
     */
    static Schema of(String table) {
        switch (table) {
            case RAW_FILES: return RAW_FILES_SCHEMA;
            case EPISODES: return EPISODES_SCHEMA;
            case FRAMES: return FRAMES_SCHEMA;
            default: throw new IllegalArgumentException("unknown lake table '" + table
                    + "'; expected one of " + CORE_TABLES);
        }
    }
}
