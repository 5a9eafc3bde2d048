package io.flywheel.enrich.model;

import java.util.Locale;

/**
 * How {@link NsfwjsConverter} turns the cut layer's feature map, float32 [N,C,H,W], into the model
 * output.
 *
 * <ul>
 *   <li>{@link #AVERAGE}: ONNX {@code GlobalAveragePool} + {@code Flatten}: output {@code embedding}
 *       [N,C], the mean of each channel over the H x W positions.</li>
 *   <li>{@link #MAX}: ONNX {@code GlobalMaxPool} + {@code Flatten}: output {@code embedding} [N,C],
 *       the maximum of each channel over the H x W positions. On a ReLU map this is the MAC
 *       descriptor (maximum activations of convolutions) of Tolias, Sicre &amp; J&eacute;gou,
 *       "Particular object retrieval with integral max-pooling of CNN activations", ICLR 2016,
 *       arXiv:1511.05879; also Razavian et al., "Visual instance retrieval with deep convolutional
 *       networks", ITE Trans. MTA 2016. It keeps small, local cues that an average dilutes.</li>
 *   <li>{@link #NONE}: no pooling: output {@code features}, the raw feature map [N,C,H,W] (for
 *       inspection and tests; {@link OnnxEmbedder} would flatten it to C*H*W values).</li>
 * </ul>
 */
public enum Pooling {
    /** Global average pooling. */
    AVERAGE("average", "GlobalAveragePool"),
    /** Global max pooling (MAC). */
    MAX("max", "GlobalMaxPool"),
    /** The raw NCHW feature map. */
    NONE("none", null);

    private final String label;
    private final String onnxOp;

    Pooling(String label, String onnxOp) {
        this.label = label;
        this.onnxOp = onnxOp;
    }

    /** @return the name recorded in the ONNX metadata {@code flywheel.pooling}: average, max or none */
    public String label() {
        return label;
    }

    /** @return the ONNX operator, {@code GlobalAveragePool} or {@code GlobalMaxPool}; null for {@link #NONE} */
    public String onnxOp() {
        return onnxOp;
    }

    /**
     * @param name average, max or none (any case)
     * @throws IllegalArgumentException naming the accepted values
     */
    public static Pooling byName(String name) {
        String n = name.toLowerCase(Locale.ROOT);
        for (Pooling p : values()) {
            if (p.label.equals(n)) {
                return p;
            }
        }
        throw new IllegalArgumentException("unknown pooling '" + name + "': expected average, max or none");
    }
}
