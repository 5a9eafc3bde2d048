package io.flywheel.sim;

import java.util.List;

/**
 * The fixed vocabulary of the simulated fleet: scenes, lighting conditions, operators and
 * graspable objects. Colours are sRGB 0-255; sizes are metres.
 */
public final class Catalog {
    private Catalog() {}

    /**
     * A workplace a robot stands in.
     *
     * @param name e.g. "kitchen"
     * @param wall wall colour {r, g, b}
     * @param table table-top colour {r, g, b}
     * @param floor floor colour {r, g, b}
     * @param bin colour of the bin objects are placed in {r, g, b}
     */
    public record Scene(String name, int[] wall, int[] table, int[] floor, int[] bin) {}

    /**
     * A lighting condition, applied to every colour as {@code c * gain * cast[channel]}.
     *
     * @param name e.g. "daylight"
     * @param gain overall brightness factor (1 = nominal)
     * @param cast per-channel colour cast {r, g, b} factors
     * @param noise standard deviation of the sensor noise in 8-bit levels (dim light is noisier)
     */
    public record Lighting(String name, double gain, double[] cast, double noise) {}

    /**
     * A graspable object.
     *
     * @param name e.g. "glass_cup"
     * @param shape "cylinder", "box" or "sphere"
     * @param width grasp width in metres (what the closed gripper measures when it holds it)
     * @param height height in metres
     * @param color body colour {r, g, b}
     * @param transparent drawn see-through (glass); the cause of most field failures
     * @param reflective drawn with a strong specular glint (polished metal or glass)
     */
    public record ObjectKind(String name, String shape, double width, double height, int[] color,
                             boolean transparent, boolean reflective) {
        /** @return true for the rare hard objects: transparent or reflective */
        public boolean hard() {
            return transparent || reflective;
        }
    }

    public static final List<Scene> SCENES = List.of(
            new Scene("kitchen", rgb(222, 214, 196), rgb(150, 110, 72), rgb(120, 120, 118), rgb(60, 60, 64)),
            new Scene("warehouse", rgb(170, 172, 176), rgb(96, 98, 104), rgb(88, 86, 80), rgb(30, 90, 160)),
            new Scene("tabletop", rgb(236, 236, 240), rgb(210, 206, 200), rgb(140, 130, 120), rgb(40, 40, 40)),
            new Scene("lab", rgb(200, 210, 214), rgb(40, 44, 52), rgb(150, 156, 160), rgb(200, 60, 40)),
            new Scene("retail", rgb(214, 196, 180), rgb(180, 160, 130), rgb(100, 96, 92), rgb(30, 120, 60)),
            new Scene("office", rgb(190, 196, 204), rgb(120, 84, 56), rgb(70, 76, 90), rgb(90, 90, 96)));

    public static final List<Lighting> LIGHTINGS = List.of(
            new Lighting("daylight", 1.0, new double[] {1.0, 1.0, 1.0}, 2.0),
            new Lighting("warm_indoor", 0.92, new double[] {1.08, 0.98, 0.82}, 2.5),
            new Lighting("fluorescent", 1.05, new double[] {0.94, 1.04, 1.02}, 2.0),
            new Lighting("dim", 0.55, new double[] {1.0, 0.97, 0.92}, 5.0),
            new Lighting("backlit", 0.8, new double[] {0.96, 0.98, 1.06}, 3.5));

    public static final List<String> OPERATORS = List.of(
            "op_alice", "op_bruno", "op_chen", "op_dara", "op_emeka", "op_farah", "op_goran", "op_hana");

    /** Ordinary (opaque, matte) objects. */
    public static final List<ObjectKind> OPAQUE = List.of(
            new ObjectKind("red_mug", "cylinder", 0.080, 0.095, rgb(190, 40, 36), false, false),
            new ObjectKind("blue_mug", "cylinder", 0.080, 0.095, rgb(40, 70, 180), false, false),
            new ObjectKind("cardboard_box", "box", 0.070, 0.080, rgb(176, 134, 84), false, false),
            new ObjectKind("tea_box", "box", 0.060, 0.110, rgb(40, 130, 70), false, false),
            new ObjectKind("apple", "sphere", 0.075, 0.075, rgb(200, 30, 30), false, false),
            new ObjectKind("orange", "sphere", 0.070, 0.070, rgb(240, 140, 20), false, false),
            new ObjectKind("banana", "box", 0.035, 0.040, rgb(236, 206, 60), false, false),
            new ObjectKind("soda_can", "cylinder", 0.066, 0.120, rgb(200, 200, 210), false, false),
            new ObjectKind("sponge", "box", 0.060, 0.030, rgb(250, 220, 60), false, false));

    /** The glass cup: transparent, the object the field failures happen on. */
    public static final ObjectKind GLASS_CUP =
            new ObjectKind("glass_cup", "cylinder", 0.072, 0.100, rgb(205, 225, 230), true, true);

    /** Other rare hard objects (transparent or reflective). */
    public static final List<ObjectKind> OTHER_HARD = List.of(
            new ObjectKind("wine_glass", "cylinder", 0.070, 0.150, rgb(210, 228, 232), true, true),
            new ObjectKind("steel_tumbler", "cylinder", 0.075, 0.110, rgb(180, 184, 190), false, true));

    /** @return the task string an operator is given for this object, e.g. "pick the glass cup and place it in the bin" */
    public static String task(ObjectKind object) {
        return "pick the " + object.name().replace('_', ' ') + " and place it in the bin";
    }

    private static int[] rgb(int r, int g, int b) {
        return new int[] {r, g, b};
    }
}
