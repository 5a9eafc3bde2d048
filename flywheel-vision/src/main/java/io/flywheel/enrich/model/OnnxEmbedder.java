package io.flywheel.enrich.model;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import ai.onnxruntime.NodeInfo;
import ai.onnxruntime.OnnxTensor;
import ai.onnxruntime.OnnxValue;
import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtException;
import ai.onnxruntime.OrtSession;
import ai.onnxruntime.TensorInfo;
import io.flywheel.enrich.Embedder;
import io.flywheel.enrich.RgbImage;

/**
 * An {@link Embedder} backed by any ONNX image model run with ONNX Runtime (CPU).
 *
 * <p>The model must have one float32 image input of rank 4, NCHW: [N,3,H,W] (N may be symbolic or
 * fixed; H and W fixed, or given with {@link Builder#inputSize}). Its first output, whatever its
 * shape, is flattened per image to D values and L2-normalised; an all-zero output stays zero.
 * Input and output names and shapes are read from the model. Images are resized and scaled as
 * the chosen {@link Preprocessing} says and run in batches of at most
 * {@link Builder#maxBatch} (1 when the model's batch dimension is fixed to 1).
 *
 * <p>Not thread-safe: one instance per worker thread; {@link Builder#intraOpThreads} sets the
 * threads ONNX Runtime uses inside one call (default 1, since the pipeline parallelises across
 * frames).
 */
public final class OnnxEmbedder implements Embedder {
    private final Path file;
    private final String modelId;
    private final String sha256;
    private final Preprocessing preprocessing;
    private final OrtEnvironment env;
    private final OrtSession session;
    private final String inputName;
    private final String outputName;
    private final int height;
    private final int width;
    private final int maxBatch;
    private final int dimension;
    private final long[] inputShape;
    private final long[] outputShape;
    private final Map<String, String> metadata;
    private FloatBuffer buffer;
    private boolean closed;

    /** Options for {@link OnnxEmbedder}; defaults: id from the file name, UNIT, 1 thread, batch 32. */
    public static final class Builder {
        private final Path file;
        private String modelId;
        private Preprocessing preprocessing = Preprocessing.UNIT;
        private int intraOpThreads = 1;
        private int maxBatch = 32;
        private int inputSize;

        private Builder(Path file) {
            this.file = Objects.requireNonNull(file, "file");
        }

        /** @param id the model id recorded with embeddings (default: file name without {@code .onnx}) */
        public Builder modelId(String id) {
            this.modelId = id;
            return this;
        }

        /** @param p how images become the input tensor (default {@link Preprocessing#UNIT}) */
        public Builder preprocessing(Preprocessing p) {
            this.preprocessing = Objects.requireNonNull(p, "preprocessing");
            return this;
        }

        /** @param threads ONNX Runtime intra-op threads, &gt;= 1 (default 1) */
        public Builder intraOpThreads(int threads) {
            if (threads < 1) {
                throw new IllegalArgumentException("intra-op threads must be >= 1, got " + threads);
            }
            this.intraOpThreads = threads;
            return this;
        }

        /** @param n the most images per inference call, &gt;= 1 (default 32) */
        public Builder maxBatch(int n) {
            if (n < 1) {
                throw new IllegalArgumentException("batch size must be >= 1, got " + n);
            }
            this.maxBatch = n;
            return this;
        }

        /**
         * @param side square input side in pixels, used only when the model leaves H and W symbolic
         *             (e.g. 224 for CLIP ViT-B/32)
         */
        public Builder inputSize(int side) {
            if (side < 1) {
                throw new IllegalArgumentException("input size must be >= 1, got " + side);
            }
            this.inputSize = side;
            return this;
        }

        /**
         * Loads the model.
         *
         * @return an open embedder; close it after use
         * @throws EmbeddingException when the file is missing or unreadable, is not a valid ONNX model,
         *                            or its input is not a float32 image tensor [N,3,H,W]
         */
        public OnnxEmbedder build() {
            return new OnnxEmbedder(this);
        }
    }

    /** @return options for the model at {@code file} */
    public static Builder builder(Path file) {
        return new Builder(file);
    }

    /** Loads a model with the default options ({@link Preprocessing#UNIT}, 1 thread, batch 32). */
    public static OnnxEmbedder open(Path file) {
        return builder(file).build();
    }

    private OnnxEmbedder(Builder b) {
        this.file = b.file;
        this.preprocessing = b.preprocessing;
        String name = file.getFileName() == null ? file.toString() : file.getFileName().toString();
        this.modelId = b.modelId != null ? b.modelId : name.endsWith(".onnx") ? name.substring(0, name.length() - 5) : name;
        byte[] bytes;
        if (!Files.exists(file)) {
            throw new EmbeddingException("model file " + file + " does not exist", null);
        }
        if (!Files.isRegularFile(file)) {
            throw new EmbeddingException("model file " + file + " is not a regular file", null);
        }
        try {
            bytes = Files.readAllBytes(file);
        } catch (IOException | OutOfMemoryError e) {
            throw new EmbeddingException("model file " + file + " cannot be read: " + e.getMessage(), e);
        }
        this.sha256 = sha256(bytes);
        this.env = OrtEnvironment.getEnvironment();
        OrtSession s = null;
        try (OrtSession.SessionOptions opts = new OrtSession.SessionOptions()) {
            opts.setIntraOpNumThreads(b.intraOpThreads);
            opts.setInterOpNumThreads(1);
            opts.setExecutionMode(OrtSession.SessionOptions.ExecutionMode.SEQUENTIAL);
            opts.setOptimizationLevel(OrtSession.SessionOptions.OptLevel.ALL_OPT);
            try {
                s = env.createSession(bytes, opts);
            } catch (OrtException e) {
                throw new EmbeddingException("model file " + file + " (" + bytes.length
                        + " bytes) is not a valid ONNX model: " + firstLine(e.getMessage()), e);
            }
            this.session = s;
            Map<String, NodeInfo> inputs = session.getInputInfo();
            Map<String, NodeInfo> outputs = session.getOutputInfo();
            if (inputs.size() != 1) {
                throw new EmbeddingException("model file " + file + ": expected one image input, found "
                        + inputs.size() + ": " + inputs.keySet(), null);
            }
            if (outputs.isEmpty()) {
                throw new EmbeddingException("model file " + file + ": the model has no output", null);
            }
            this.metadata = Map.copyOf(session.getMetadata().getCustomMetadata());
            NodeInfo in = inputs.values().iterator().next();
            NodeInfo out = outputs.values().iterator().next();
            this.inputName = in.getName();
            this.outputName = out.getName();
            if (!(in.getInfo() instanceof TensorInfo ti) || ti.type != ai.onnxruntime.OnnxJavaType.FLOAT) {
                throw new EmbeddingException("model file " + file + ": input '" + inputName
                        + "' must be a float32 tensor, found " + in.getInfo(), null);
            }
            long[] shape = ti.getShape();
            this.inputShape = shape;
            if (shape.length != 4) {
                throw new EmbeddingException("model file " + file + ": input '" + inputName + "' has rank "
                        + shape.length + " " + Arrays.toString(shape) + ", expected rank 4 [N,3,H,W] (NCHW)", null);
            }
            if (shape[1] != 3) {
                throw new EmbeddingException("model file " + file + ": input '" + inputName + "' has shape "
                        + Arrays.toString(shape) + ", expected 3 channels in dimension 1 [N,3,H,W] (NCHW)", null);
            }
            if ((shape[2] <= 0 || shape[3] <= 0) && b.inputSize == 0) {
                throw new EmbeddingException("model file " + file + ": input '" + inputName + "' has symbolic height/width "
                        + Arrays.toString(shape) + "; give the input size", null);
            }
            this.height = shape[2] > 0 ? (int) shape[2] : b.inputSize;
            this.width = shape[3] > 0 ? (int) shape[3] : b.inputSize;
            this.maxBatch = shape[0] > 0 ? (int) Math.min(shape[0], b.maxBatch) : b.maxBatch;
            if (shape[0] > 1) {
                throw new EmbeddingException("model file " + file + ": input '" + inputName + "' has a fixed batch of "
                        + shape[0] + "; expected a symbolic batch or 1", null);
            }
            this.outputShape = out.getInfo() instanceof TensorInfo to ? to.getShape() : new long[0];
            long d = 1;
            boolean known = outputShape.length >= 1;
            for (int i = 1; i < outputShape.length; i++) {
                if (outputShape[i] <= 0) {
                    known = false;
                }
                d *= outputShape[i];
            }
            this.dimension = known ? (int) d : probeDimension();
        } catch (OrtException e) {
            close();
            throw new EmbeddingException("model file " + file + ": " + firstLine(e.getMessage()), e);
        } catch (RuntimeException e) {
            if (s != null) {
                try {
                    s.close();
                } catch (OrtException ignored) {
                    // already failing
                }
            }
            throw e;
        }
    }

    private int probeDimension() {
        RgbImage grey = new RgbImage(width, height, new byte[width * height * 3]);
        return run(List.of(grey), 0, 1, null);
    }

    @Override
    public String modelId() {
        return modelId;
    }

    @Override
    public String sha256() {
        return sha256;
    }

    @Override
    public int dimension() {
        return dimension;
    }

    /** @return the model file */
    public Path file() {
        return file;
    }

    /** @return the input tensor's name, e.g. {@code pixel_values} */
    public String inputName() {
        return inputName;
    }

    /** @return the output tensor's name, e.g. {@code embedding} */
    public String outputName() {
        return outputName;
    }

    /** @return the input shape as the model declares it; -1 marks a symbolic dimension */
    public long[] inputShape() {
        return inputShape.clone();
    }

    /** @return the output shape as the model declares it; -1 marks a symbolic dimension */
    public long[] outputShape() {
        return outputShape.clone();
    }

    /** @return H, the input height in pixels */
    public int inputHeight() {
        return height;
    }

    /** @return W, the input width in pixels */
    public int inputWidth() {
        return width;
    }

    /** @return the model's metadata_props (e.g. {@code flywheel.model_id}, {@code flywheel.source}); may be empty */
    public Map<String, String> metadata() {
        return metadata;
    }

    /** @return the preprocessing applied to each image */
    public Preprocessing preprocessing() {
        return preprocessing;
    }

    /**
     * @param images any number of images of any size (an empty list gives an empty result)
     * @return float32[images.size()][D], each row L2-normalised
     * @throws EmbeddingException when ONNX Runtime fails, naming the model file
     * @throws IllegalStateException after {@link #close()}
     */
    @Override
    public float[][] embed(List<RgbImage> images) {
        if (closed) {
            throw new IllegalStateException("embedder for " + file + " is closed");
        }
        float[][] out = new float[images.size()][];
        for (int start = 0; start < images.size(); start += maxBatch) {
            int n = Math.min(maxBatch, images.size() - start);
            run(images, start, n, out);
        }
        return out;
    }

    /**
     * Embeds a tensor that is already preprocessed, bypassing resizing: float32 [N,3,H,W] NCHW.
     *
     * @param pixels N*3*H*W values
     * @param n      N
     * @return float32[N][D], each row L2-normalised
     */
    public float[][] embedTensor(float[] pixels, int n) {
        if (pixels.length != (long) n * 3 * height * width) {
            throw new IllegalArgumentException("expected " + ((long) n * 3 * height * width) + " values for [" + n + ",3,"
                    + height + "," + width + "], got " + pixels.length);
        }
        float[][] out = new float[n][];
        for (int start = 0; start < n; start += maxBatch) {
            int m = Math.min(maxBatch, n - start);
            FloatBuffer buf = buffer(m);
            buf.put(pixels, start * 3 * height * width, m * 3 * height * width);
            buf.flip();
            infer(buf, m, start, out);
        }
        return out;
    }

    private FloatBuffer buffer(int n) {
        int need = n * 3 * height * width;
        if (buffer == null || buffer.capacity() < need) {
            buffer = ByteBuffer.allocateDirect(maxBatch * 3 * height * width * 4).order(ByteOrder.nativeOrder()).asFloatBuffer();
        }
        buffer.clear();
        return buffer;
    }

    /** Runs images[start, start+n) and stores rows in out (when not null); returns D. */
    private int run(List<RgbImage> images, int start, int n, float[][] out) {
        FloatBuffer buf = buffer(n);
        for (int i = 0; i < n; i++) {
            preprocessing.fill(images.get(start + i), height, width, buf);
        }
        buf.flip();
        return infer(buf, n, start, out);
    }

    private int infer(FloatBuffer buf, int n, int start, float[][] out) {
        try (OnnxTensor t = OnnxTensor.createTensor(env, buf, new long[] {n, 3, height, width});
             OrtSession.Result r = session.run(Map.of(inputName, t), java.util.Set.of(outputName))) {
            OnnxValue v = r.get(0);
            if (!(v instanceof OnnxTensor ot) || ot.getInfo().type != ai.onnxruntime.OnnxJavaType.FLOAT) {
                throw new EmbeddingException("model file " + file + ": output '" + outputName
                        + "' is not a float32 tensor", null);
            }
            FloatBuffer fb = ot.getFloatBuffer();
            int total = fb.remaining();
            if (total % n != 0) {
                throw new EmbeddingException("model file " + file + ": output '" + outputName + "' holds " + total
                        + " values for " + n + " images", null);
            }
            int d = total / n;
            if (out != null) {
                for (int i = 0; i < n; i++) {
                    float[] row = new float[d];
                    fb.get(row);
                    normalise(row);
                    out[start + i] = row;
                }
            }
            return d;
        } catch (OrtException e) {
            throw new EmbeddingException("model file " + file + ": inference failed: " + firstLine(e.getMessage()), e);
        }
    }

    /** Scales v to unit L2 norm in place (accumulated in double); an all-zero vector stays zero. */
    static void normalise(float[] v) {
        double sum = 0;
        for (float x : v) {
            sum += (double) x * x;
        }
        if (sum > 0) {
            float inv = (float) (1.0 / Math.sqrt(sum));
            for (int i = 0; i < v.length; i++) {
                v[i] *= inv;
            }
        }
    }

    /** @return lower-case hex SHA-256 of the bytes */
    static String sha256(byte[] bytes) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("the JDK lacks SHA-256", e);
        }
    }

    private static String firstLine(String s) {
        if (s == null) {
            return "(no message)";
        }
        int nl = s.indexOf('\n');
        return nl < 0 ? s : s.substring(0, nl);
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (session != null) {
            try {
                session.close();
            } catch (OrtException e) {
                throw new EmbeddingException("model file " + file + ": closing the session failed", e);
            }
        }
    }
}
