package io.flywheel.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;

import io.flywheel.curate.PcaWhitening;
import io.flywheel.curate.pool.EpisodeVectors;
import io.flywheel.curate.pool.MinedNeighboursFile;
import io.flywheel.curate.pool.MiningJob;
import io.flywheel.curate.trainset.MinedEpisode;
import io.flywheel.enrich.EnrichJob;
import io.flywheel.enrich.EnrichOptions;
import io.flywheel.enrich.Stride;
import io.flywheel.enrich.model.BuiltinModel;
import io.flywheel.enrich.model.ModelCache;
import io.flywheel.ingest.IngestOptions;
import io.flywheel.ingest.IngestJob;
import io.flywheel.lake.Lake;
import io.flywheel.quality.RuleSet;
import picocli.CommandLine;
import io.flywheel.error.BadInputException;
import io.flywheel.error.NotFoundException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** {@code flywheel mine LAKE}: the episodes most like the robot's failures (or given episodes or recordings). */
@Command(name = "mine", mixinStandardHelpOptions = true,
        description = "Find the k nearest episodes of the deduplicated, QC-passing, successful pool to each query"
                + " (failure episodes, episode ids, or new MCAP recordings) through a Lance vector index; prints them"
                + " and writes the neighbours file `trainset build --mined` takes.")
final class MineCommand implements Callable<Integer> {
    @Spec
    CommandLine.Model.CommandSpec spec;

    @Mixin
    LakeLocation location;

    @Option(names = "--failures", description = "query with every episode whose outcome is a failure")
    boolean failures;

    @Option(names = "--episode", paramLabel = "ID", description = "query with this episode (repeatable)")
    List<String> episodes = new ArrayList<>();

    @Option(names = "--recording", paramLabel = "FILE", description = "query with a new recording (MCAP, bag, RLDS; not"
            + " added to the lake: it is ingested and embedded in a scratch lake with the lake's model; with --cameras its vector"
            + " comes from the same cameras, and a recording without them fails) (repeatable)")
    List<Path> recordings = new ArrayList<>();

    @Option(names = "--failures-from-eval", paramLabel = "RUN", description = "query with the failed rollouts of an"
            + " evaluation run that have a recording in the lake (with --cell: of those cells; with --against: of the"
            + " cells that regressed against that run); rollouts without one are reported as not minable")
    String failuresFromEval;

    @Option(names = "--cell", paramLabel = "DIM=VALUE", description = "with --failures-from-eval: only rollouts with"
            + " this value, e.g. object=glass_cup (repeatable; dimensions task, object, lighting, scene, robot)")
    List<String> evalCells = new ArrayList<>();

    @Option(names = "--against", paramLabel = "RUN_A", description = "with --failures-from-eval: only the cells that"
            + " eval compare RUN_A RUN flags as regressions (BH q = 0.05 over task, object, lighting, robot)")
    String evalBaseline;

    @Option(names = "-k", defaultValue = "8", description = "neighbours per query (default ${DEFAULT-VALUE})")
    int k;

    @Option(names = "--robot", description = "only episodes of this robot id")
    String robot;

    @Option(names = "--task", description = "only episodes with this task text")
    String task;

    @Option(names = "--nprobes", defaultValue = "20", description = "IVF partitions searched (default ${DEFAULT-VALUE})")
    int nprobes;

    @Option(names = "--refine-factor", defaultValue = "10",
            description = "candidates re-ranked exactly, times k; 0: none (default ${DEFAULT-VALUE})")
    int refineFactor;

    @Option(names = "--cameras", paramLabel = "TOPIC", split = ",",
            description = "build episode vectors from these cameras' frame embeddings (e.g. the wrist cameras): the"
                    + " normalised mean over the cameras of each camera's normalised mean; episodes without embeddings on"
                    + " every one are left out (default: the model's episodes column emb_<key>, the master camera)")
    List<String> cameras = new ArrayList<>();

    @Option(names = "--phases", paramLabel = "PHASE", split = ",",
            description = "with --cameras: build the vectors from the frames of these phases only (frames.phase, written"
                    + " by enrich: idle, approach, grasp, lift, place, retreat), e.g. approach,grasp,lift")
    List<String> phases = new ArrayList<>();

    @Option(names = "--whiten", description = "PCA-whiten pool and queries (fitted on the prefiltered pool) before the"
            + " search, so that directions every episode shares (the scene) count less; distances are then in the"
            + " whitened space")
    boolean whiten;

    @Option(names = "--whiten-epsilon", paramLabel = "E",
            description = "whitening regulariser: each eigenvalue gets E * the largest added (default 0.001; needs --whiten)")
    Double whitenEpsilon;

    @Option(names = "--joint", description = "search the queries as one: the normalised mean of their vectors finds"
            + " k x queries neighbours, each listed under the query it is nearest to (failures on one kind of object in"
            + " different scenes share the object, and their mean averages the scenes out); default: k per query")
    boolean joint;

    @Option(names = "--model", paramLabel = "ID", description = "the embedding model whose vectors are mined (default:"
            + " the model enrich registered last)")
    String model;

    @Option(names = "--out", paramLabel = "FILE", description = "write the neighbours file here (JSON)")
    Path out;

    @Mixin
    JsonOutput jsonOutput;

    @Override
    public Integer call() throws IOException {
        if (whitenEpsilon != null && !whiten) {
            throw new ParameterException(spec.commandLine(), "--whiten-epsilon needs --whiten");
        }
        Usage.atLeast(spec, "-k", k, 1);
        Usage.atLeast(spec, "--nprobes", nprobes, 1);
        Usage.atLeast(spec, "--refine-factor", refineFactor, 0);
        requireNames("--cameras", cameras, "/left_wrist_camera/image_raw/compressed");
        requireNames("--phases", phases, "approach,grasp");
        Usage.require(spec, failures || !episodes.isEmpty() || !recordings.isEmpty() || failuresFromEval != null,
                "nothing to mine for: give --failures, --episode ID or --recording FILE (or --failures-from-eval RUN)");
        Usage.require(spec, failuresFromEval != null || (evalCells.isEmpty() && evalBaseline == null),
                "--cell and --against need --failures-from-eval RUN");
        // --failures-from-eval RUN already queries with failures: both would run (and list) every such query twice
        Usage.require(spec, !(failures && failuresFromEval != null),
                "--failures and --failures-from-eval exclude each other: give one");
        Map<String, String> cellFilter = MineFromEval.parseCells(spec, evalCells);
        MineFromEval.Selection fromEval = null;
        MiningJob.Options options;
        try {
            options = MiningJob.Options.builder(k).robot(robot).task(task).nprobes(nprobes).refineFactor(refineFactor)
                    .cameras(cameras).phases(phases).whiten(whiten).joint(joint).model(model)
                    .whitenEpsilon(whitenEpsilon == null ? PcaWhitening.DEFAULT_EPSILON : whitenEpsilon).build();
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), (whitenEpsilon != null && e.getMessage().contains("epsilon")
                    ? "--whiten-epsilon: " : !phases.isEmpty() && e.getMessage().contains("phase") ? "--phases: "
                    : !cameras.isEmpty() && e.getMessage().contains("camera") ? "--cameras: " : "") + e.getMessage());
        }
        String lake = location.uri();
        boolean json = jsonOutput.enabled();
        long t0 = System.nanoTime();
        MiningJob.Result r;
        try (Lake l = location.open()) {
            EpisodeVectors ev = MiningJob.vectors(l, options);
            List<MiningJob.Query> queries = new ArrayList<>();
            if (failures) {
                queries.addAll(MiningJob.failures(ev));
                if (queries.isEmpty()) {
                    throw new BadInputException("--failures: no episode of " + lake + " with an embedding has a"
                            + " failure outcome");
                }
            }
            if (failuresFromEval != null) {
                fromEval = MineFromEval.select(l, ev, failuresFromEval, cellFilter, evalBaseline);
                queries.addAll(fromEval.queries());
            }
            for (String e : episodes) {
                queries.add(MiningJob.episode(ev, e));
            }
            for (Path rec : recordings) {
                queries.addAll(recordingQueries(rec, ev, cameras, options.phases()));
            }
            r = MiningJob.run(l, ev, queries, options);
        }
        double secs = (System.nanoTime() - t0) / 1e9;
        Map<String, Object> lineage = new LinkedHashMap<>(r.lineage());
        lineage.put("mine_command_line", "flywheel mine " + lake + (failures ? " --failures" : "") + " -k " + k
                + (cameras.isEmpty() ? "" : " --cameras " + String.join(",", cameras))
                + (phases.isEmpty() ? "" : " --phases " + String.join(",", phases))
                + (whiten ? " --whiten --whiten-epsilon " + options.whitenEpsilon() : "") + (joint ? " --joint" : ""));
        if (fromEval != null) {
            fromEval.addLineage(lineage);
            lineage.put("mine_command_line", lineage.get("mine_command_line") + " --failures-from-eval "
                    + failuresFromEval + (evalBaseline == null ? "" : " --against " + evalBaseline)
                    + evalCells.stream().map(c -> " --cell " + c).collect(java.util.stream.Collectors.joining()));
        }
        MinedNeighboursFile.Contents mined = new MinedNeighboursFile.Contents(r.neighbours(), lineage);
        if (out != null) {
            try {
                MinedNeighboursFile.write(out, mined);
            } catch (BadInputException e) {
                throw new BadInputException("--out " + e.getMessage(), e);
            }
        }
        Map<String, Object> file = mined.toJson();
        if (json) {
            file.put("index", r.index().kind().name());
            file.put("pool_size", r.poolSize());
            file.put("pool_passing_prefilter", r.poolPassing());
            file.put("cameras", options.cameras());
            file.put("phases", options.phases());
            file.put("whiten", options.whiten());
            file.put("whiten_epsilon", options.whiten() ? options.whitenEpsilon() : null);
            file.put("joint", options.joint());
            file.put("distance", lineage.get("distance"));
            file.put("episodes_with_vectors", r.episodesWithVectors());
            file.put("episodes_without_vectors", r.episodesWithoutVectors());
            file.put("seconds", secs);
            if (fromEval != null) {
                file.put("eval", fromEval.json());
            }
            Json.print(System.out, file);
            return 0;
        }
        String current = null;
        for (MinedEpisode m : r.neighbours()) {
            if (!m.queryEpisodeId().equals(current)) {
                current = m.queryEpisodeId();
                System.out.println("query " + current + ":");
            }
            System.out.printf(Locale.ROOT, "  %2d. %-28s %s %.4f%n", m.rank(), m.episodeId(),
                    whiten ? "whitened cosine distance" : "cosine distance", m.distance());
        }
        System.out.printf(Locale.ROOT, "vectors: %s%s%s; %d episode(s) with vectors, %d left out (no embedding%s)%n",
                cameras.isEmpty() ? r.lineage().get("episode_vectors") + " (master camera)"
                        : "cameras " + String.join(", ", cameras),
                phases.isEmpty() ? "" : ", frames of phases " + String.join(", ", phases),
                whiten ? String.format(Locale.ROOT, ", PCA-whitened (epsilon %s, fitted on %d pool episodes; distances are"
                        + " in the whitened space)", options.whitenEpsilon(), r.whitening().fittedOn()) : ", not whitened",
                r.episodesWithVectors(), r.episodesWithoutVectors(), cameras.isEmpty() ? "" : " on every camera"
                        + (phases.isEmpty() ? "" : " in those phases"));
        System.out.printf(Locale.ROOT, "%d quer%s%s, %d neighbours from a pool of %d, %d passing the prefilter (%s: %s);"
                        + " %.1f s%s%n",
                r.queries().size(), r.queries().size() == 1 ? "y" : "ies", joint ? " searched as one joint query" : "",
                r.neighbours().size(), r.poolSize(), r.poolPassing(), r.index().kind(), r.index().reason(), secs,
                out != null ? "; neighbours file " + out.toAbsolutePath() : "");
        if (fromEval != null) {
            System.out.println(fromEval.summary());
        }
        return 0;
    }

    /** A list option given with an empty name (e.g. {@code --cameras ,}) is a usage error, not "option not given". */
    private void requireNames(String option, List<String> given, String example) {
        if (spec.commandLine().getParseResult().hasMatchedOption(option)
                && (given.isEmpty() || given.stream().anyMatch(String::isBlank))) {
            throw new ParameterException(spec.commandLine(), option + ": an empty name in " + given
                    + "; give comma-separated names, e.g. " + example);
        }
    }

    /**
     * Ingests and embeds a recording in a scratch lake with the lake's model; one query per episode, built the way the
     * lake's vectors are (the same cameras and phases, else the model's episodes column). A recording lacking one of the cameras
     * (or frames of the phases) fails.
     */
    private static List<MiningJob.Query> recordingQueries(Path rec, EpisodeVectors ev, List<String> cameras,
                                                          List<String> phases) throws IOException {
        BuiltinModel model = BuiltinModel.byName(ev.model());
        Path scratch = Files.createTempDirectory(Path.of(System.getProperty("java.io.tmpdir")), "mine-query");
        List<MiningJob.Query> out = new ArrayList<>();
        try (Lake q = Lake.init(scratch.resolve("lake"));
                var embedder = ModelCache.user().open(model, 1)) {
            IngestJob.Result in = IngestJob.run(q, List.of(rec), IngestOptions.defaults(), IngestJob.AlignConfig.defaults(),
                    RuleSet.defaults(), line -> { });
            if (!in.failed().isEmpty()) {
                throw new BadInputException("--recording " + rec + ": " + in.failed().get(0).message());
            }
            EnrichJob.run(q, embedder, EnrichOptions.builder().stride(Stride.every(5)).build(), p -> { });
            EpisodeVectors qv;
            try {
                // the same construction as the lake's vectors: the same cameras and phases, or the episodes column
                qv = cameras.isEmpty() ? EpisodeVectors.read(q) : EpisodeVectors.fromCameras(q, cameras, phases);
            } catch (NotFoundException | IllegalArgumentException e) { // e.g. a camera of the lake's vectors it lacks
                throw new BadInputException("--recording " + rec + ": " + e.getMessage(), e);
            }
            for (int i = 0; i < qv.size(); i++) {
                out.add(new MiningJob.Query(rec.getFileName() + "#" + qv.infos().get(i).episodeId(), qv.vectors()[i],
                        "recording " + rec));
            }
        }
        return out;
    }
}
