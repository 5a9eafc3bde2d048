package io.flywheel.stream.label;

import io.flywheel.stream.rules.Outcome;

/**
 * One episode's stream label.
 *
 * @param robotId the robot
 * @param episodeId the episode
 * @param outcome success, failure or needs_review
 * @param rule the rule that decided it: {@code e_stop}, {@code intervention}, {@code empty_grasp},
 *     {@code success_signal} or {@code no_success_signal}
 * @param rulesVersion the rules' version ({@link io.flywheel.stream.rules.LabelRules#version()})
 */
public record Label(String robotId, String episodeId, Outcome outcome, String rule, String rulesVersion)
        implements java.io.Serializable {
    private static final long serialVersionUID = 1L;
    public static final String E_STOP = "e_stop";
    public static final String INTERVENTION = "intervention";
    public static final String EMPTY_GRASP = "empty_grasp";
    public static final String SUCCESS_SIGNAL = "success_signal";
    public static final String NO_SUCCESS_SIGNAL = "no_success_signal";
}
