package io.flywheel.curate.trainset;

/**
 * The descriptive fields of an episode that training-set selection and composition use.
 *
 * @param episodeId episode id
 * @param robotId robot id ("" when unknown)
 * @param task task text ("" when unknown)
 * @param scene scene ("" when unknown)
 * @param object manipulated object, from the episode metadata key {@code object} ("" when unknown)
 * @param outcome success / failure... ("" when unknown)
 * @param qualityStatus pass / warn / fail ("" before quality rules ran)
 * @param duplicateOf representative of the episode's near-duplicate group (null when not
 *     deduplicated or when it is its own representative)
 */
public record EpisodeInfo(String episodeId, String robotId, String task, String scene, String object, String outcome,
                          String qualityStatus, String duplicateOf) {
    /** @return whether the outcome says failure (the text starts with "failure") */
    public boolean failed() {
        return outcome.startsWith("failure");
    }

    /** @return whether a near-duplicate group put this episode under another representative */
    public boolean duplicate() {
        return duplicateOf != null && !duplicateOf.isEmpty() && !duplicateOf.equals(episodeId);
    }

    /**
     * @param dimension {@code scene}, {@code object}, {@code task} or {@code robot}
     * @return this episode's value on it ("" when unknown)
     */
    public String value(String dimension) {
        return switch (dimension) {
            case "scene" -> scene;
            case "object" -> object;
            case "task" -> task;
            case "robot" -> robotId;
            default -> throw new IllegalArgumentException("unknown composition dimension '" + dimension
                    + "'; expected scene, object, task or robot");
        };
    }
}
