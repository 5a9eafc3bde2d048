package io.flywheel.enrich.model;

import java.util.Locale;

/**
 * The image-embedding models Flywheel builds by itself from {@code nsfwjs@4.4.0}: ImageNet-pretrained
 * convolutional features, truncated at a layer where nsfwjs froze the ImageNet layers, followed by a
 * global average pool or a global max pool ({@link Pooling}). They are not CLIP (no text alignment);
 * they serve frame similarity, dedup and mining. Input {@code pixel_values}: float32 [N,3,S,S],
 * RGB / 255 ({@link Preprocessing#UNIT}); output {@code embedding}: float32 [N,D].
 *
 * <p>Each model has an id (the cached file's base name and {@code flywheel.model_id} in its ONNX
 * metadata) and a short name for the command line; {@link #byName} accepts either.
 */
public enum BuiltinModel {
    /**
     * MobileNetV2 (Sandler et al., CVPR 2018, arXiv:1801.04381) up to {@code block_10}'s output
     * ({@code block_10_project_BN}) + global average pool: D = 96, S = 224. The project default: about
     * 8 ms per image on one CPU core and a 1.3 MB file. Short name {@code mobilenet_v2}.
     */
    MOBILENET_V2_BLOCK10_GAP("mobilenet_v2_block10_gap", "mobilenet_v2", "mobilenet_v2", "block_10_project_BN",
            Pooling.AVERAGE, 224, 96),
    /**
     * InceptionV3 (Szegedy et al., CVPR 2016, arXiv:1512.00567) up to the {@code mixed5} block +
     * global average pool: D = 768, S = 299. Richer features, about 12 times slower than MobileNetV2.
     * Short name {@code inception_v3}.
     */
    INCEPTION_V3_MIXED5_GAP("inception_v3_mixed5_gap", "inception_v3", "inception_v3", "mixed5", Pooling.AVERAGE, 299, 768),
    /**
     * MobileNetV2 up to {@code block_10}'s expansion ({@code block_10_expand_relu}: the 1x1 expansion
     * of block_10's 64 input channels by 6, a ReLU6 map of 384 channels at 14 x 14 for a 224 input;
     * the last expansion nsfwjs kept frozen at its ImageNet weights) + global max pool: the MAC
     * descriptor (Tolias, Sicre &amp; J&eacute;gou, ICLR 2016, arXiv:1511.05879): D = 384, S = 224,
     * each value in [0, 6] before normalisation. Keeps small, local object cues (a glint, a rim) that
     * average pooling dilutes; for mining episodes similar to a failure. Short name
     * {@code mobilenet_v2_mac}.
     */
    MOBILENET_V2_BLOCK10_MAC("mobilenet_v2_block10_mac", "mobilenet_v2_mac", "mobilenet_v2", "block_10_expand_relu",
            Pooling.MAX, 224, 384);

    /** The model used when none is named. */
    public static final BuiltinModel DEFAULT = MOBILENET_V2_BLOCK10_GAP;

    private final String id;
    private final String shortName;
    private final String nsfwjsFolder;
    private final String cutLayer;
    private final Pooling pooling;
    private final int inputSize;
    private final int dimension;

    BuiltinModel(String id, String shortName, String nsfwjsFolder, String cutLayer, Pooling pooling, int inputSize,
                 int dimension) {
        this.id = id;
        this.shortName = shortName;
        this.nsfwjsFolder = nsfwjsFolder;
        this.cutLayer = cutLayer;
        this.pooling = pooling;
        this.inputSize = inputSize;
        this.dimension = dimension;
    }

    /** @return the model id, also the cached file's base name, e.g. {@code mobilenet_v2_block10_gap} */
    public String id() {
        return id;
    }

    /** @return the command-line name, e.g. {@code mobilenet_v2} or {@code mobilenet_v2_mac} */
    public String shortName() {
        return shortName;
    }

    /** @return the folder below {@code dist/models/} of the nsfwjs package, e.g. {@code mobilenet_v2} */
    public String nsfwjsFolder() {
        return nsfwjsFolder;
    }

    /** @return the Keras layer whose output is pooled into the embedding */
    public String cutLayer() {
        return cutLayer;
    }

    /** @return how the cut layer's map becomes the embedding: {@link Pooling#AVERAGE} or {@link Pooling#MAX} */
    public Pooling pooling() {
        return pooling;
    }

    /** @return S, the square input side in pixels */
    public int inputSize() {
        return inputSize;
    }

    /** @return D, the embedding length */
    public int dimension() {
        return dimension;
    }

    /**
     * Looks a model up by short name ({@code mobilenet_v2}, {@code inception_v3},
     * {@code mobilenet_v2_mac}) or by id ({@code mobilenet_v2_block10_gap}, ...), ignoring case.
     *
     * @throws IllegalArgumentException naming the known models when none matches
     */
    public static BuiltinModel byName(String name) {
        String n = name.toLowerCase(Locale.ROOT);
        for (BuiltinModel m : values()) {
            if (m.id.equals(n) || m.shortName.equals(n)) {
                return m;
            }
        }
        StringBuilder known = new StringBuilder();
        for (BuiltinModel m : values()) {
            known.append(known.length() == 0 ? "" : ", ").append(m.shortName);
        }
        for (BuiltinModel m : values()) {
            known.append(", ").append(m.id);
        }
        throw new IllegalArgumentException("unknown model '" + name + "': expected one of " + known);
    }
}
