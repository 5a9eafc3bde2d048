package io.flywheel.curate.pool;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;

import org.junit.jupiter.api.Test;

import io.flywheel.curate.ExactSearch;
import io.flywheel.curate.Grouping;
import io.flywheel.curate.Groups;
import io.flywheel.curate.trainset.EpisodeInfo;

/** The dedup job's episode priority (QC status, then outcome) with complete-linkage groups. */
class DedupPriorityTest {

    static float[] unit(double angle) {
        return new float[] {(float) Math.cos(angle), (float) Math.sin(angle)};
    }

    static EpisodeInfo episode(String id, String qc, String outcome) {
        return new EpisodeInfo(id, "r1", "pick", "", "", outcome, qc, null);
    }

    @Test
    void qcStatusPriorityDoesNotChainAGroup() {
        // a (fail) at 0 rad, b (pass) at 0.3 rad, c (warn) at 0.55 rad: d(a,b) = 1 - cos 0.3 = 0.0447,
        // d(b,c) = 1 - cos 0.25 = 0.0311, d(a,c) = 1 - cos 0.55 = 0.1475, threshold 0.05. b leads by QC status;
        // within 0.05 of b are both, but a and c are 0.1475 apart: c (nearer) joins b, a stays on its own.
        // Grouping by distance to the representative would have made one group of diameter 0.1475.
        List<EpisodeInfo> infos = List.of(episode("a", "fail", "success"), episode("b", "pass", "failure"),
                episode("c", "warn", "success"));
        double[] priority = DedupJob.episodePriority(infos);
        assertArrayEquals(new double[] {1, 4, 3}, priority);
        float[][] v = {unit(0), unit(0.3), unit(0.55)};
        Groups g = Grouping.embeddings(v, 0.05, priority);
        assertEquals(2, g.groupCount());
        assertEquals(1, g.representative(0));
        assertArrayEquals(new int[] {1, 2}, g.members(0));
        assertArrayEquals(new int[] {0}, g.members(1));
        assertEquals(1 - Math.cos(0.25), g.distanceToRepresentative(2), 1e-5);
        for (int grp = 0; grp < g.groupCount(); grp++) {
            int[] m = g.members(grp);
            for (int x = 0; x < m.length; x++) {
                for (int y = x + 1; y < m.length; y++) {
                    assertTrue(ExactSearch.cosineDistance(v[m[x]], v[m[y]]) <= 0.05);
                }
            }
        }
    }
}
