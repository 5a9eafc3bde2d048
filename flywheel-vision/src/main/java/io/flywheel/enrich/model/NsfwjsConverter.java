package io.flywheel.enrich.model;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Converts a TF.js Keras layers-model shipped in {@code nsfwjs@4.4.0} into a truncated ONNX
 * embedding model: the graph up to a cut layer, then {@code GlobalAveragePool} or {@code GlobalMaxPool}
 * (see {@link Pooling}) and {@code Flatten}.
 *
 * <p>Input: the package's {@code dist/models/<folder>/model.min.js} (a browserify bundle exporting
 * {@code {modelTopology, weightsManifest}}; the topology is Keras 2.2.4 {@code model_config}) and its
 * weight shards {@code group1-shard<i>of<n>.min.js} (each exports one base64 string; the decoded
 * shards, concatenated in manifest order, hold the tensors in manifest order). Quantised tensors
 * ({@code quantization.dtype} uint8 or uint16) dequantise as {@code q * scale + min}, float16 ones
 * as IEEE half floats, exactly as TF.js does when it loads the model
 * (TF.js {@code io.decodeWeights}).
 *
 * <p>Output: ONNX opset 13 (IR version 7) protobuf bytes. Graph input {@code pixel_values}
 * float32 [N,3,S,S] (NCHW, RGB / 255), output {@code embedding} float32 [N,D]. Layouts move from
 * Keras NHWC to ONNX NCHW: Conv2D kernels [kh,kw,in,out] become [out,in,kh,kw], depthwise kernels
 * [kh,kw,C,m] become [C*m,1,kh,kw] with {@code group = C}; {@code padding='same'} becomes explicit
 * pads, split as TensorFlow does (the odd pixel at the bottom/right); ZeroPadding2D becomes
 * {@code Pad}; BatchNormalization keeps its epsilon (gamma 1 when {@code scale=false}); ReLU with
 * {@code max_value=6} becomes {@code Clip(0, 6)}; AveragePooling2D excludes the padding from the
 * average ({@code count_include_pad=0}), as TensorFlow does.
 *
 * <p>Supported layers: InputLayer, Conv2D, DepthwiseConv2D, BatchNormalization, ReLU, Activation
 * (relu, linear), ZeroPadding2D, MaxPooling2D, AveragePooling2D, Concatenate, Add, Dropout. Others
 * before the cut raise {@link ModelFormatException}.
 */
public final class NsfwjsConverter {
    /** The ONNX default-domain opset the converter writes. */
    public static final int OPSET = 13;

    private final String file;
    private final byte[] weightBytes;
    private final Map<String, WeightSpec> weightSpecs = new HashMap<>();
    private final OnnxGraph graph;
    private final Map<String, String> valueOf = new HashMap<>(); // Keras layer -> ONNX value name
    private final Map<String, int[]> shapeOf = new HashMap<>();  // Keras layer -> {C, H, W}

    private record WeightSpec(String name, int[] shape, long offset, String dtype, String quantDtype, double min,
                              double scale) {}

    private NsfwjsConverter(String file, byte[] weightBytes, String graphName) {
        this.file = file;
        this.weightBytes = weightBytes;
        this.graph = new OnnxGraph(graphName);
    }

    /**
     * Builds one of the project's built-in embedding models.
     *
     * @param pkg   the nsfwjs 4.4.0 package files
     * @param model which model and cut
     * @return ONNX model bytes
     * @throws ModelFormatException when the package files are not the expected TF.js model
     */
    public static byte[] convert(NsfwjsPackage pkg, BuiltinModel model) throws IOException {
        Map<String, String> meta = new LinkedHashMap<>();
        meta.put("flywheel.model_id", model.id());
        meta.put("flywheel.preprocessing", "unit");
        meta.put("flywheel.source", "npm:nsfwjs@" + NsfwjsPackage.VERSION + " dist/models/" + model.nsfwjsFolder()
                + " (MIT, Infinite Red)");
        meta.put("flywheel.cut_layer", model.cutLayer());
        if (model.pooling() != Pooling.AVERAGE) {
            // Written only for non-average models so that the average-pooled models' bytes (and the
            // sha256 of files already in users' caches) stay as they were; absent means average.
            meta.put("flywheel.pooling", model.pooling().label());
        }
        return convert(pkg, model.nsfwjsFolder(), model.cutLayer(), model.pooling(), model.id(), meta);
    }

    /**
     * Converts any nsfwjs model folder, cut at any layer whose output is a 4-D feature map.
     *
     * @param pkg       package files
     * @param folder    folder below {@code dist/models/}, e.g. {@code mobilenet_v2}
     * @param cutLayer  Keras layer name whose output is pooled
     * @param graphName ONNX graph name
     * @param metadata  ONNX metadata_props to record
     * @return ONNX model bytes
     * @throws ModelFormatException when a file is malformed, the cut layer is missing or a layer is unsupported
     */
    public static byte[] convert(NsfwjsPackage pkg, String folder, String cutLayer, String graphName,
                                 Map<String, String> metadata) throws IOException {
        return convert(pkg, folder, cutLayer, Pooling.AVERAGE, graphName, metadata);
    }

    /**
     * Converts any nsfwjs model folder, cut at any layer whose output is a 4-D feature map
     * [N,C,H,W], with a choice of pooling: {@link Pooling#AVERAGE} or {@link Pooling#MAX} give
     * output {@code embedding} float32 [N,C]; {@link Pooling#NONE} gives output {@code features},
     * the feature map itself, float32 [N,C,H,W].
     *
     * @param pkg       package files
     * @param folder    folder below {@code dist/models/}, e.g. {@code mobilenet_v2}
     * @param cutLayer  Keras layer name whose output is pooled
     * @param pooling   what follows the cut layer
     * @param graphName ONNX graph name
     * @param metadata  ONNX metadata_props to record (as given: the caller adds {@code flywheel.pooling})
     * @return ONNX model bytes
     * @throws ModelFormatException when a file is malformed, the cut layer is missing or a layer is unsupported
     */
    public static byte[] convert(NsfwjsPackage pkg, String folder, String cutLayer, Pooling pooling, String graphName,
                                 Map<String, String> metadata) throws IOException {
        String dir = "dist/models/" + folder + "/";
        String modelFile = pkg.origin() + "/" + dir + "model.min.js";
        String text = new String(pkg.read(dir + "model.min.js"), StandardCharsets.ISO_8859_1);
        Map<String, Object> root = map(JsLiteral.parseAfter(text, "exports={", modelFile), modelFile, "the module export");
        Map<String, Object> topology = map(root.get("modelTopology"), modelFile, "modelTopology");
        Map<String, Object> modelConfig = map(topology.get("model_config"), modelFile, "modelTopology.model_config");
        Map<String, Object> config = map(modelConfig.get("config"), modelFile, "model_config.config");
        List<Object> layers = list(config.get("layers"), modelFile, "model_config.config.layers");
        List<Object> manifest = list(root.get("weightsManifest"), modelFile, "weightsManifest");

        // Weights: decode the shards of every group, concatenated, then index the tensors.
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        List<WeightSpec> specs = new ArrayList<>();
        for (Object g : manifest) {
            Map<String, Object> group = map(g, modelFile, "a weightsManifest group");
            long groupStart = all.size();
            for (Object p : list(group.get("paths"), modelFile, "weightsManifest paths")) {
                String shardFile = dir + p + ".min.js";
                String shardText = new String(pkg.read(shardFile), StandardCharsets.ISO_8859_1);
                Object b64 = JsLiteral.parseAfter(shardText, "exports=\"", pkg.origin() + "/" + shardFile);
                if (!(b64 instanceof String s)) {
                    throw new ModelFormatException(pkg.origin() + "/" + shardFile + ": expected a base64 string export");
                }
                try {
                    all.write(Base64.getDecoder().decode(s));
                } catch (IllegalArgumentException ex) {
                    throw new ModelFormatException(pkg.origin() + "/" + shardFile + ": invalid base64: " + ex.getMessage());
                }
            }
            long offset = groupStart;
            for (Object w : list(group.get("weights"), modelFile, "weightsManifest weights")) {
                Map<String, Object> wm = map(w, modelFile, "a weight entry");
                String name = string(wm.get("name"), modelFile, "weight name");
                int[] shape = ints(wm.get("shape"), modelFile, "shape of weight " + name);
                String dtype = string(wm.get("dtype"), modelFile, "dtype of weight " + name);
                long count = 1;
                for (int d : shape) {
                    count *= d;
                }
                String qd = null;
                double min = 0;
                double scale = 0;
                int bytesPer;
                if (wm.get("quantization") != null) {
                    Map<String, Object> q = map(wm.get("quantization"), modelFile, "quantization of " + name);
                    qd = string(q.get("dtype"), modelFile, "quantization dtype of " + name);
                    bytesPer = switch (qd) {
                        case "uint8" -> 1;
                        case "uint16", "float16" -> 2;
                        default -> throw new ModelFormatException(modelFile + ": weight " + name
                                + ": unsupported quantization dtype " + qd + " (expected uint8, uint16 or float16)");
                    };
                    if (!qd.equals("float16")) {
                        min = number(q.get("min"), modelFile, "quantization min of " + name);
                        scale = number(q.get("scale"), modelFile, "quantization scale of " + name);
                    }
                } else if (dtype.equals("float32") || dtype.equals("int32")) {
                    bytesPer = 4;
                } else {
                    throw new ModelFormatException(modelFile + ": weight " + name + ": unsupported dtype " + dtype);
                }
                if (!dtype.equals("float32")) {
                    throw new ModelFormatException(modelFile + ": weight " + name + ": expected dtype float32, found " + dtype);
                }
                specs.add(new WeightSpec(name, shape, offset, dtype, qd, min, scale));
                offset += count * bytesPer;
            }
            if (offset != all.size()) {
                throw new ModelFormatException(modelFile + ": the weights manifest describes " + (offset - groupStart)
                        + " bytes, the shards hold " + (all.size() - groupStart));
            }
        }

        NsfwjsConverter c = new NsfwjsConverter(modelFile, all.toByteArray(), graphName);
        for (WeightSpec s : specs) {
            c.weightSpecs.put(s.name(), s);
        }
        c.build(layers, cutLayer, pooling);
        return c.graph.toModelBytes(OPSET, "flywheel", "0.1.0",
                "Truncated at " + cutLayer + (pooling == Pooling.NONE ? " (no pooling)" : " + " + pooling.onnxOp())
                        + ", converted from npm nsfwjs@" + NsfwjsPackage.VERSION
                        + " " + dir + " (the same bytes whichever copy of the package is read)", metadata);
    }

    private void build(List<Object> layers, String cutLayer, Pooling pooling) throws ModelFormatException {
        Map<String, Map<String, Object>> byName = new LinkedHashMap<>();
        Map<String, List<String>> inbound = new HashMap<>();
        for (Object o : layers) {
            Map<String, Object> layer = map(o, file, "a layer");
            String name = string(layer.get("name"), file, "layer name");
            byName.put(name, layer);
            List<String> ins = new ArrayList<>();
            List<Object> nodes = list(layer.get("inbound_nodes"), file, "inbound_nodes of layer " + name);
            if (nodes.size() > 1) {
                throw new ModelFormatException(file + ": layer " + name + " is called " + nodes.size()
                        + " times; shared layers are not supported");
            }
            if (nodes.size() == 1) {
                for (Object edge : list(nodes.get(0), file, "inbound node of " + name)) {
                    List<Object> e = list(edge, file, "inbound edge of " + name);
                    ins.add(string(e.get(0), file, "inbound layer name of " + name));
                }
            }
            inbound.put(name, ins);
        }
        if (!byName.containsKey(cutLayer)) {
            throw new ModelFormatException(file + ": no layer named " + cutLayer + " to cut at");
        }
        // The layers the cut depends on.
        Set<String> needed = new HashSet<>();
        List<String> stack = new ArrayList<>(List.of(cutLayer));
        while (!stack.isEmpty()) {
            String n = stack.remove(stack.size() - 1);
            if (needed.add(n)) {
                List<String> ins = inbound.get(n);
                if (ins == null) {
                    throw new ModelFormatException(file + ": layer input " + n + " is not a layer of the model");
                }
                stack.addAll(ins);
            }
        }
        // Keras lists layers in topological order.
        for (Map.Entry<String, Map<String, Object>> e : byName.entrySet()) {
            if (needed.contains(e.getKey())) {
                layer(e.getKey(), e.getValue(), inbound.get(e.getKey()));
            }
        }
        int[] cut = shapeOf.get(cutLayer);
        switch (pooling) {
            case AVERAGE -> graph.node("GlobalAveragePool", "global_average_pool", List.of(valueOf.get(cutLayer)), "pooled");
            case MAX -> graph.node("GlobalMaxPool", "global_max_pool", List.of(valueOf.get(cutLayer)), "pooled");
            case NONE -> {
                graph.node("Identity", "features", List.of(valueOf.get(cutLayer)), "features");
                graph.output("features", "N", cut[0], cut[1], cut[2]);
                return;
            }
        }
        graph.node("Flatten", "flatten", List.of("pooled"), "embedding").attr("axis", 1L);
        graph.output("embedding", "N", cut[0]);
    }

    private void layer(String name, Map<String, Object> layer, List<String> ins) throws ModelFormatException {
        String cls = string(layer.get("class_name"), file, "class_name of " + name);
        Map<String, Object> cfg = map(layer.get("config"), file, "config of " + name);
        String where = file + ": layer " + name + " (" + cls + ")";
        if (!cls.equals("InputLayer")) {
            int expected = cls.equals("Concatenate") || cls.equals("Add") ? -1 : 1;
            if (ins.isEmpty() || expected == 1 && ins.size() != 1) {
                throw new ModelFormatException(where + ": expected " + (expected == 1 ? "one input" : "inputs")
                        + ", found " + ins.size());
            }
            Object format = cfg.get("data_format");
            if (format != null && !"channels_last".equals(format)) {
                throw new ModelFormatException(where + ": expected data_format channels_last, found " + format);
            }
        }
        String in = ins.isEmpty() ? null : valueOf.get(ins.get(0));
        int[] s = ins.isEmpty() ? null : shapeOf.get(ins.get(0)); // {C, H, W}
        switch (cls) {
            case "InputLayer" -> {
                int[] shape = intsAllowNull(cfg.get("batch_input_shape"), where, "batch_input_shape");
                if (shape.length != 4 || shape[3] != 3 || shape[1] <= 0 || shape[2] <= 0) {
                    throw new ModelFormatException(where + ": expected batch_input_shape [null,H,W,3]");
                }
                graph.input("pixel_values", "N", 3, shape[1], shape[2]);
                valueOf.put(name, "pixel_values");
                shapeOf.put(name, new int[] {3, shape[1], shape[2]});
            }
            case "ZeroPadding2D" -> {
                int[][] p = padding2d(cfg.get("padding"), where);
                String pads = name + "/pads";
                graph.int64Initializer(pads, new long[] {8}, new long[] {0, 0, p[0][0], p[1][0], 0, 0, p[0][1], p[1][1]});
                // Pad's 'mode' defaults to constant and its constant_value to 0: zero padding.
                graph.node("Pad", name, List.of(in, pads), name);
                put(name, new int[] {s[0], s[1] + p[0][0] + p[0][1], s[2] + p[1][0] + p[1][1]});
            }
            case "Conv2D", "DepthwiseConv2D" -> {
                boolean depthwise = cls.equals("DepthwiseConv2D");
                int[] k = pair(cfg.get("kernel_size"), where, "kernel_size");
                int[] st = pair(cfg.get("strides"), where, "strides");
                int[] dil = pair(cfg.get("dilation_rate"), where, "dilation_rate");
                boolean same = padMode(cfg, where);
                int cin = s[0];
                int cout;
                float[] w;
                if (depthwise) {
                    int mult = (int) number(cfg.get("depth_multiplier"), where, "depth_multiplier");
                    WeightSpec spec = spec(name + "/depthwise_kernel", where, new int[] {k[0], k[1], cin, mult});
                    w = depthwiseToOnnx(dequantize(spec), k[0], k[1], cin, mult);
                    cout = cin * mult;
                    graph.floatInitializer(name + "/W", new long[] {cout, 1, k[0], k[1]}, w);
                } else {
                    cout = (int) number(cfg.get("filters"), where, "filters");
                    WeightSpec spec = spec(name + "/kernel", where, new int[] {k[0], k[1], cin, cout});
                    w = convToOnnx(dequantize(spec), k[0], k[1], cin, cout);
                    graph.floatInitializer(name + "/W", new long[] {cout, cin, k[0], k[1]}, w);
                }
                List<String> inputs = new ArrayList<>(List.of(in, name + "/W"));
                if (Boolean.TRUE.equals(cfg.get("use_bias"))) {
                    float[] b = dequantize(spec(name + "/bias", where, new int[] {cout}));
                    graph.floatInitializer(name + "/B", new long[] {cout}, b);
                    inputs.add(name + "/B");
                }
                int[] ph = pads(s[1], k[0], st[0], dil[0], same);
                int[] pw = pads(s[2], k[1], st[1], dil[1], same);
                String activation = cfg.get("activation") == null ? "linear" : string(cfg.get("activation"), where, "activation");
                String out = activation.equals("linear") ? name : name + "/preact";
                graph.node("Conv", name, inputs, out)
                        .attr("kernel_shape", k[0], k[1])
                        .attr("strides", st[0], st[1])
                        .attr("dilations", dil[0], dil[1])
                        .attr("pads", ph[0], pw[0], ph[1], pw[1])
                        .attr("group", depthwise ? cin : 1L);
                activation(activation, out, name, where);
                put(name, new int[] {cout, outSize(s[1], k[0], st[0], dil[0], ph), outSize(s[2], k[1], st[1], dil[1], pw)});
            }
            case "BatchNormalization" -> {
                Object axis = cfg.get("axis");
                double ax = axis instanceof List<?> l && l.size() == 1 ? number(l.get(0), where, "axis") : number(axis, where, "axis");
                if (ax != -1 && ax != 3) {
                    throw new ModelFormatException(where + ": expected the channel axis (-1 or 3), found " + axis);
                }
                int c = s[0];
                float[] gamma = Boolean.FALSE.equals(cfg.get("scale")) ? fill(c, 1f)
                        : dequantize(spec(name + "/gamma", where, new int[] {c}));
                float[] beta = Boolean.FALSE.equals(cfg.get("center")) ? fill(c, 0f)
                        : dequantize(spec(name + "/beta", where, new int[] {c}));
                float[] mean = dequantize(spec(name + "/moving_mean", where, new int[] {c}));
                float[] var = dequantize(spec(name + "/moving_variance", where, new int[] {c}));
                graph.floatInitializer(name + "/scale", new long[] {c}, gamma);
                graph.floatInitializer(name + "/B", new long[] {c}, beta);
                graph.floatInitializer(name + "/mean", new long[] {c}, mean);
                graph.floatInitializer(name + "/var", new long[] {c}, var);
                graph.node("BatchNormalization", name,
                                List.of(in, name + "/scale", name + "/B", name + "/mean", name + "/var"), name)
                        .attr("epsilon", (float) number(cfg.get("epsilon"), where, "epsilon"));
                put(name, s);
            }
            case "ReLU" -> {
                double slope = cfg.get("negative_slope") == null ? 0 : number(cfg.get("negative_slope"), where, "negative_slope");
                double threshold = cfg.get("threshold") == null ? 0 : number(cfg.get("threshold"), where, "threshold");
                if (slope != 0 || threshold != 0) {
                    throw new ModelFormatException(where + ": expected negative_slope 0 and threshold 0, found "
                            + slope + " and " + threshold);
                }
                if (cfg.get("max_value") == null) {
                    graph.node("Relu", name, List.of(in), name);
                } else {
                    float max = (float) number(cfg.get("max_value"), where, "max_value");
                    graph.floatInitializer(name + "/min", new long[0], new float[] {0f});
                    graph.floatInitializer(name + "/max", new long[0], new float[] {max});
                    graph.node("Clip", name, List.of(in, name + "/min", name + "/max"), name);
                }
                put(name, s);
            }
            case "Activation" -> {
                String act = string(cfg.get("activation"), where, "activation");
                if (act.equals("linear")) {
                    valueOf.put(name, in);
                    shapeOf.put(name, s);
                } else {
                    activation(act, in, name, where);
                    put(name, s);
                }
            }
            case "Dropout" -> {
                valueOf.put(name, in);
                shapeOf.put(name, s);
            }
            case "MaxPooling2D", "AveragePooling2D" -> {
                int[] k = pair(cfg.get("pool_size"), where, "pool_size");
                int[] st = cfg.get("strides") == null ? k : pair(cfg.get("strides"), where, "strides");
                boolean same = padMode(cfg, where);
                int[] ph = pads(s[1], k[0], st[0], 1, same);
                int[] pw = pads(s[2], k[1], st[1], 1, same);
                OnnxGraph.NodeBuilder nb = graph.node(cls.startsWith("Max") ? "MaxPool" : "AveragePool", name, List.of(in), name)
                        .attr("kernel_shape", k[0], k[1])
                        .attr("strides", st[0], st[1])
                        .attr("pads", ph[0], pw[0], ph[1], pw[1]);
                if (!cls.startsWith("Max")) {
                    nb.attr("count_include_pad", 0L);
                }
                put(name, new int[] {s[0], outSize(s[1], k[0], st[0], 1, ph), outSize(s[2], k[1], st[1], 1, pw)});
            }
            case "Concatenate" -> {
                double axis = number(cfg.get("axis"), where, "axis");
                if (axis != -1 && axis != 3) {
                    throw new ModelFormatException(where + ": expected concatenation on the channel axis (-1 or 3), found " + axis);
                }
                List<String> values = new ArrayList<>();
                int channels = 0;
                for (String i : ins) {
                    int[] si = shapeOf.get(i);
                    if (si[1] != s[1] || si[2] != s[2]) {
                        throw new ModelFormatException(where + ": inputs differ in height/width: " + i);
                    }
                    values.add(valueOf.get(i));
                    channels += si[0];
                }
                graph.node("Concat", name, values, name).attr("axis", 1L);
                put(name, new int[] {channels, s[1], s[2]});
            }
            case "Add" -> {
                String acc = in;
                for (int i = 1; i < ins.size(); i++) {
                    if (!java.util.Arrays.equals(shapeOf.get(ins.get(i)), s)) {
                        throw new ModelFormatException(where + ": inputs differ in shape: " + ins.get(i));
                    }
                    String out = i == ins.size() - 1 ? name : name + "/partial" + i;
                    graph.node("Add", out, List.of(acc, valueOf.get(ins.get(i))), out);
                    acc = out;
                }
                if (ins.size() == 1) {
                    valueOf.put(name, in);
                    shapeOf.put(name, s);
                } else {
                    put(name, s);
                }
            }
            default -> throw new ModelFormatException(where + ": layer type " + cls
                    + " is not supported before the cut (supported: InputLayer, Conv2D, DepthwiseConv2D,"
                    + " BatchNormalization, ReLU, Activation, ZeroPadding2D, MaxPooling2D, AveragePooling2D,"
                    + " Concatenate, Add, Dropout)");
        }
    }

    private void put(String name, int[] shape) {
        valueOf.put(name, name);
        shapeOf.put(name, shape);
    }

    private void activation(String activation, String in, String name, String where) throws ModelFormatException {
        switch (activation) {
            case "linear" -> { }
            case "relu" -> graph.node("Relu", name + (in.equals(name) ? "/relu" : ""), List.of(in), name);
            default -> throw new ModelFormatException(where + ": activation " + activation
                    + " is not supported (expected relu or linear)");
        }
    }

    /** TensorFlow's split of 'same' padding: total = max((ceil(in/s)-1)*s + (k-1)*d + 1 - in, 0), the extra pixel after. */
    static int[] pads(int in, int k, int stride, int dilation, boolean same) {
        if (!same) {
            return new int[] {0, 0};
        }
        int effective = (k - 1) * dilation + 1;
        int out = (in + stride - 1) / stride;
        int total = Math.max((out - 1) * stride + effective - in, 0);
        return new int[] {total / 2, total - total / 2};
    }

    private static int outSize(int in, int k, int stride, int dilation, int[] pads) {
        int effective = (k - 1) * dilation + 1;
        return (in + pads[0] + pads[1] - effective) / stride + 1;
    }

    /** Keras Conv2D kernel [kh,kw,in,out] to ONNX Conv weight [out,in,kh,kw]. */
    static float[] convToOnnx(float[] src, int kh, int kw, int cin, int cout) {
        float[] dst = new float[src.length];
        for (int i = 0; i < kh; i++) {
            for (int j = 0; j < kw; j++) {
                for (int ci = 0; ci < cin; ci++) {
                    int base = ((i * kw + j) * cin + ci) * cout;
                    for (int co = 0; co < cout; co++) {
                        dst[((co * cin + ci) * kh + i) * kw + j] = src[base + co];
                    }
                }
            }
        }
        return dst;
    }

    /** Keras depthwise kernel [kh,kw,C,m] to ONNX grouped Conv weight [C*m,1,kh,kw] (output channel c*m + j). */
    static float[] depthwiseToOnnx(float[] src, int kh, int kw, int c, int mult) {
        float[] dst = new float[src.length];
        for (int i = 0; i < kh; i++) {
            for (int j = 0; j < kw; j++) {
                for (int ch = 0; ch < c; ch++) {
                    for (int m = 0; m < mult; m++) {
                        dst[((ch * mult + m) * kh + i) * kw + j] = src[((i * kw + j) * c + ch) * mult + m];
                    }
                }
            }
        }
        return dst;
    }

    private WeightSpec spec(String name, String where, int[] expectedShape) throws ModelFormatException {
        WeightSpec s = weightSpecs.get(name);
        if (s == null) {
            throw new ModelFormatException(where + ": the weights manifest has no tensor " + name);
        }
        if (!java.util.Arrays.equals(s.shape(), expectedShape)) {
            throw new ModelFormatException(where + ": tensor " + name + " has shape " + java.util.Arrays.toString(s.shape())
                    + ", expected " + java.util.Arrays.toString(expectedShape));
        }
        return s;
    }

    private float[] dequantize(WeightSpec s) {
        int count = 1;
        for (int d : s.shape()) {
            count *= d;
        }
        float[] out = new float[count];
        int off = (int) s.offset();
        byte[] b = weightBytes;
        if (s.quantDtype() == null) {
            for (int i = 0; i < count; i++) {
                int p = off + 4 * i;
                out[i] = Float.intBitsToFloat((b[p] & 0xFF) | (b[p + 1] & 0xFF) << 8 | (b[p + 2] & 0xFF) << 16 | (b[p + 3] & 0xFF) << 24);
            }
            return out;
        }
        switch (s.quantDtype()) {
            case "uint8" -> {
                for (int i = 0; i < count; i++) {
                    out[i] = (float) ((b[off + i] & 0xFF) * s.scale() + s.min());
                }
            }
            case "uint16" -> {
                for (int i = 0; i < count; i++) {
                    int q = (b[off + 2 * i] & 0xFF) | (b[off + 2 * i + 1] & 0xFF) << 8;
                    out[i] = (float) (q * s.scale() + s.min());
                }
            }
            default -> { // float16
                for (int i = 0; i < count; i++) {
                    short h = (short) ((b[off + 2 * i] & 0xFF) | (b[off + 2 * i + 1] & 0xFF) << 8);
                    out[i] = halfToFloat(h);
                }
            }
        }
        return out;
    }

    /** IEEE 754 binary16 to float32 (exact). */
    static float halfToFloat(short h) {
        int sign = (h >> 15) & 1;
        int exp = (h >> 10) & 0x1F;
        int mant = h & 0x3FF;
        float v;
        if (exp == 0) {
            v = mant * 0x1p-24f;
        } else if (exp == 31) {
            v = mant == 0 ? Float.POSITIVE_INFINITY : Float.NaN;
        } else {
            v = Float.intBitsToFloat((exp - 15 + 127) << 23 | mant << 13);
        }
        return sign == 1 ? -v : v;
    }

    private static float[] fill(int n, float v) {
        float[] f = new float[n];
        java.util.Arrays.fill(f, v);
        return f;
    }

    private static boolean padMode(Map<String, Object> cfg, String where) throws ModelFormatException {
        Object p = cfg.get("padding");
        if ("same".equals(p)) {
            return true;
        }
        if ("valid".equals(p)) {
            return false;
        }
        throw new ModelFormatException(where + ": expected padding 'same' or 'valid', found " + p);
    }

    private static int[][] padding2d(Object p, String where) throws ModelFormatException {
        if (p instanceof Number n) {
            int v = n.intValue();
            return new int[][] {{v, v}, {v, v}};
        }
        List<Object> l = list(p, where, "padding");
        if (l.size() != 2) {
            throw new ModelFormatException(where + ": expected padding [[top,bottom],[left,right]], found " + p);
        }
        int[][] out = new int[2][];
        for (int i = 0; i < 2; i++) {
            if (l.get(i) instanceof Number n) {
                out[i] = new int[] {n.intValue(), n.intValue()};
            } else {
                out[i] = ints(l.get(i), where, "padding");
                if (out[i].length != 2) {
                    throw new ModelFormatException(where + ": expected padding [[top,bottom],[left,right]], found " + p);
                }
            }
        }
        return out;
    }

    private static int[] pair(Object o, String where, String what) throws ModelFormatException {
        if (o instanceof Number n) {
            return new int[] {n.intValue(), n.intValue()};
        }
        int[] v = ints(o, where, what);
        if (v.length != 2) {
            throw new ModelFormatException(where + ": expected two values for " + what + ", found " + o);
        }
        return v;
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> map(Object o, String where, String what) throws ModelFormatException {
        if (o instanceof Map<?, ?> m) {
            return (Map<String, Object>) m;
        }
        throw new ModelFormatException(where + ": expected an object for " + what + ", found " + describe(o));
    }

    @SuppressWarnings("unchecked")
    private static List<Object> list(Object o, String where, String what) throws ModelFormatException {
        if (o instanceof List<?> l) {
            return (List<Object>) l;
        }
        throw new ModelFormatException(where + ": expected an array for " + what + ", found " + describe(o));
    }

    private static String string(Object o, String where, String what) throws ModelFormatException {
        if (o instanceof String s) {
            return s;
        }
        throw new ModelFormatException(where + ": expected a string for " + what + ", found " + describe(o));
    }

    private static double number(Object o, String where, String what) throws ModelFormatException {
        if (o instanceof Number n) {
            return n.doubleValue();
        }
        throw new ModelFormatException(where + ": expected a number for " + what + ", found " + describe(o));
    }

    private static int[] ints(Object o, String where, String what) throws ModelFormatException {
        List<Object> l = list(o, where, what);
        int[] v = new int[l.size()];
        for (int i = 0; i < v.length; i++) {
            v[i] = (int) number(l.get(i), where, what);
        }
        return v;
    }

    private static int[] intsAllowNull(Object o, String where, String what) throws ModelFormatException {
        List<Object> l = list(o, where, what);
        int[] v = new int[l.size()];
        for (int i = 0; i < v.length; i++) {
            v[i] = l.get(i) == null ? -1 : (int) number(l.get(i), where, what);
        }
        return v;
    }

    private static String describe(Object o) {
        if (o == null) {
            return "nothing";
        }
        String s = String.valueOf(o);
        return o.getClass().getSimpleName() + " " + (s.length() > 40 ? s.substring(0, 40) + "..." : s);
    }
}
