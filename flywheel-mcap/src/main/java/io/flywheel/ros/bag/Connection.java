package io.flywheel.ros.bag;

/**
 * One connection record (op 0x07) of a ROS 1 bag: a topic as published by one node, with the
 * message type and its full definition (the {@code ros1msg} text: the root type's fields, then each
 * dependency after a line of {@code =} and {@code MSG: pkg/Type}).
 *
 * @param id the bag-local connection id (uint32, read as a non-negative int)
 * @param topic topic name, e.g. {@code /turtle1/pose}
 * @param type message type, e.g. {@code turtlesim/Pose}
 * @param md5sum the message definition's MD5 as 32 hex characters
 * @param messageDefinition the full message definition text
 * @param callerId the publishing node, e.g. {@code /sim}; empty when the bag does not say
 * @param latching true when the publisher latched the topic ({@code latching=1})
 */
public record Connection(int id, String topic, String type, String md5sum, String messageDefinition,
                         String callerId, boolean latching) {}
