package io.flywheel.enrich.model;

import java.util.Locale;

/**
 * The image-embedding models Flywheel builds by itself from {@code nsfwjs@4.4.0}: ImageNet-pretrained
 * convolutional features, truncated where nsfwjs froze the ImageNet layers, followed by a global
 * average pool. They are not CLIP (no text alignment); they serve frame similarity, dedup and mining.
 * Input {@code pixel_values}: float32 [N,3,S,S], RGB / 255 ({@link Preprocessing#UNIT}); output
 * {@code embedding}: float32 [N,D].
 */
public enum BuiltinModel {
    /**
     * MobileNetV2 (Sandler et al., CVPR 2018, arXiv:1801.04381) up to {@code block_10}'s output
     * ({@code block_10_project_BN}) + global average pool: D = 96, S = 224. The project default: about
     * 8 ms per image on one CPU core and a 1.3 MB file.
     */
    MOBILENET_V2_BLOCK10_GAP("mobilenet_v2_block10_gap", "mobilenet_v2", "block_10_project_BN", 224, 96),
    /**
     * InceptionV3 (Szegedy et al., CVPR 2016, arXiv:1512.00567) up to the {@code mixed5} block +
     * global average pool: D = 768, S = 299. Richer features, about 12 times slower than MobileNetV2.
     */
    INCEPTION_V3_MIXED5_GAP("inception_v3_mixed5_gap", "inception_v3", "mixed5", 299, 768);

    /** The model used when none is named. */
    public static final BuiltinModel DEFAULT = MOBILENET_V2_BLOCK10_GAP;

    private final String id;
    private final String nsfwjsFolder;
    private final String cutLayer;
    private final int inputSize;
    private final int dimension;

    BuiltinModel(String id, String nsfwjsFolder, String cutLayer, int inputSize, int dimension) {
        this.id = id;
        this.nsfwjsFolder = nsfwjsFolder;
        this.cutLayer = cutLayer;
        this.inputSize = inputSize;
        this.dimension = dimension;
    }

    /** @return the model id, also the cached file's base name, e.g. {@code mobilenet_v2_block10_gap} */
    public String id() {
        return id;
    }

    /** @return the folder below {@code dist/models/} of the nsfwjs package, e.g. {@code mobilenet_v2} */
    public String nsfwjsFolder() {
        return nsfwjsFolder;
    }

    /** @return the Keras layer whose output is pooled into the embedding */
    public String cutLayer() {
        return cutLayer;
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
     * Looks a model up by id or by nsfwjs folder name ({@code mobilenet_v2}, {@code inception_v3}).
     *
     * @throws IllegalArgumentException naming the known models when none matches
     */
    public static BuiltinModel byName(String name) {
        String n = name.toLowerCase(Locale.ROOT);
        for (BuiltinModel m : values()) {
            if (m.id.equals(n) || m.nsfwjsFolder.equals(n)) {
                return m;
            }
        }
        throw new IllegalArgumentException("unknown model '" + name + "': expected mobilenet_v2, inception_v3, "
                + MOBILENET_V2_BLOCK10_GAP.id + " or " + INCEPTION_V3_MIXED5_GAP.id);
    }
}
