package io.flywheel.fleet.upload;

import java.util.Objects;

import io.flywheel.ingest.IngestJob;
import io.flywheel.ingest.IngestOptions;
import io.flywheel.ingest.RobotProfile;
import io.flywheel.quality.RuleSet;

/**
 * How the gateway ingests landed files: what {@code flywheel ingest} takes as options. The robot id of each file is
 * the robot that uploaded it (as {@code flywheel ingest --robot ROBOT}).
 *
 * @param profile the robot profile (topic roles, master camera, clock offsets); an empty one detects roles
 * @param align alignment settings
 * @param rules quality rules
 */
public record IngestSettings(RobotProfile profile, IngestJob.AlignConfig align, RuleSet rules) {
    public IngestSettings {
        Objects.requireNonNull(profile, "profile");
        Objects.requireNonNull(align, "align");
        Objects.requireNonNull(rules, "rules");
    }

    /** @return what {@code flywheel ingest} uses without options: roles detected, default alignment and rules */
    public static IngestSettings defaults() {
        return new IngestSettings(RobotProfile.builder().build(), IngestJob.AlignConfig.defaults(), RuleSet.defaults());
    }

    /** @return the ingest options for a file uploaded by {@code robotId} */
    public IngestOptions optionsFor(String robotId) {
        return IngestOptions.builder().profile(profile).robotId(robotId).build();
    }
}
