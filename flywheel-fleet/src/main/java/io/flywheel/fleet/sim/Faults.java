package io.flywheel.fleet.sim;

import java.util.Locale;

/**
 * The faults a live simulated fleet injects, each a probability drawn from the robot's own seeded random source (so
 * the same seed injects the same faults, whatever the threads' timing):
 *
 * @param cut per upload: the robot's gRPC connection is cut (reset, no goodbye) once a uniformly drawn 10-90% of the
 *     file has been sent; the upload client must resume from the offset the gateway staged
 * @param duplicate per QoS 1 alert: the robot publishes it a second time with the same message id (a robot retrying
 *     after a lost PUBACK); the table must hold it once
 * @param reconnect per episode: the robot's MQTT connection is cut right after one of the episode's QoS 1 or 2
 *     messages is published (so it is in flight, unacknowledged); the client reconnects by itself on its persistent
 *     session (clean session off) and sends what the broker had not acknowledged again
 */
public record Faults(double cut, double duplicate, double reconnect) {
    /** No fault. */
    public static final Faults NONE = new Faults(0, 0, 0);
    /** {@code all}: a cut in 30% of the uploads, 20% of the alerts twice, a reconnect in 20% of the episodes. */
    public static final Faults ALL = new Faults(0.3, 0.2, 0.2);

    /** @throws IllegalArgumentException when a probability is outside 0..1 */
    public Faults {
        check("cut", cut);
        check("duplicate", duplicate);
        check("reconnect", reconnect);
    }

    private static void check(String name, double p) {
        if (!(p >= 0 && p <= 1)) {
            throw new IllegalArgumentException("--faults " + name + "=" + p + ": a probability must be in 0..1");
        }
    }

    /** @return whether any fault can happen */
    public boolean any() {
        return cut > 0 || duplicate > 0 || reconnect > 0;
    }

    /**
     * @param spec {@code none}, {@code all}, or a comma-separated list of {@code cut=P}, {@code duplicate=P},
     *     {@code reconnect=P} (those left out are 0), e.g. {@code cut=0.5,reconnect=0.25}
     * @return the faults
     * @throws IllegalArgumentException naming what is wrong with {@code spec}
     */
    public static Faults parse(String spec) {
        String s = spec.trim().toLowerCase(Locale.ROOT);
        if (s.equals("none")) {
            return NONE;
        }
        if (s.equals("all")) {
            return ALL;
        }
        double cut = 0;
        double dup = 0;
        double rec = 0;
        for (String part : s.split(",", -1)) {
            int eq = part.indexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException("--faults '" + spec + "': expected none, all, or"
                        + " cut=P,duplicate=P,reconnect=P");
            }
            String name = part.substring(0, eq).trim();
            double p;
            try {
                p = Double.parseDouble(part.substring(eq + 1).trim());
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("--faults " + part + ": " + part.substring(eq + 1)
                        + " is not a number");
            }
            switch (name) {
                case "cut" -> cut = p;
                case "duplicate", "dup" -> dup = p;
                case "reconnect" -> rec = p;
                default -> throw new IllegalArgumentException("--faults: unknown fault '" + name
                        + "'; expected cut, duplicate or reconnect");
            }
        }
        return new Faults(cut, dup, rec);
    }

    @Override
    public String toString() {
        return any() ? String.format(Locale.ROOT, "cut=%s,duplicate=%s,reconnect=%s", num(cut), num(duplicate),
                num(reconnect)) : "none";
    }

    private static String num(double v) {
        return v == Math.rint(v) ? Long.toString((long) v) : Double.toString(v);
    }
}
