package io.flywheel.curate.trainset;

import java.util.List;

/**
 * The names of an episode's state and action values ({@code episodes.state_names}, {@code action_names}): one per
 * value of the frames' vectors, in vector order (joint names, field paths; {@code <topic>.<name>} where two topics
 * share a name).
 *
 * @param state the state names; empty when unknown
 * @param action the action names; empty when unknown
 */
public record ValueNames(List<String> state, List<String> action) {
    /** Names unknown. */
    public static final ValueNames NONE = new ValueNames(List.of(), List.of());

    public ValueNames {
        state = state == null ? List.of() : List.copyOf(state);
        action = action == null ? List.of() : List.copyOf(action);
    }

    /**
     * @param width the vector's width
     * @param prefix the prefix of the positional names ({@code state}, {@code action})
     * @param names the stored names
     * @return the names when there is one per value, else {@code prefix_0 .. prefix_(width-1)}
     */
    public static List<String> orPositional(List<String> names, int width, String prefix) {
        if (names.size() == width) {
            return names;
        }
        List<String> out = new java.util.ArrayList<>(width);
        for (int i = 0; i < width; i++) {
            out.add(prefix + "_" + i);
        }
        return out;
    }
}
