/**
 * Live episodes: a robot streams an episode message by message ({@code StreamObservations});
 * {@link io.flywheel.fleet.live.LiveStreamService} journals each message as it arrives, resumes a cut stream where its
 * journal ends, and at END writes the episode as MCAP and lands it as an upload of that file, which is ingested like
 * any other.
 */
package io.flywheel.fleet.live;
