package io.flywheel.cli;

import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;

import io.flywheel.enrich.model.BuiltinModel;
import io.flywheel.enrich.model.ModelCache;
import io.flywheel.enrich.model.NsfwjsPackage;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code flywheel models pull|list}: the per-user cache of image-embedding models. */
@Command(name = "models", description = "Build and list the image-embedding models in the per-user cache"
        + " ($FLYWHEEL_MODELS_DIR, else $XDG_CACHE_HOME/flywheel/models, else ~/.cache/flywheel/models).",
        mixinStandardHelpOptions = true, subcommands = {ModelsCommand.Pull.class, ModelsCommand.ListModels.class})
final class ModelsCommand implements Runnable {
    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        throw Usage.missingSubcommand(spec); // a parent command alone is wrong usage (exit 2)
    }

    /** Which built-in model(s) to pull: a short name or id ({@link BuiltinModel#byName}), or {@code all}. */
    record Choice(List<BuiltinModel> models) {
        /** Parses --model; an unknown name is a usage error listing the names. */
        static final class Converter implements CommandLine.ITypeConverter<Choice> {
            @Override
            public Choice convert(String value) {
                if (value.equalsIgnoreCase("all")) {
                    return new Choice(List.of(BuiltinModel.values()));
                }
                try {
                    return new Choice(List.of(BuiltinModel.byName(value)));
                } catch (IllegalArgumentException e) {
                    throw new CommandLine.TypeConversionException("expected " + String.join(", ", new Names())
                            + " (or a model id), found '" + value + "'");
                }
            }
        }

        /** The short names and {@code all}, for --help and completion. */
        static final class Names extends ArrayList<String> {
            Names() {
                for (BuiltinModel m : BuiltinModel.values()) {
                    add(m.shortName());
                }
                add("all");
            }
        }
    }

    /** One model as the commands report it. */
    record ModelInfo(String id, String file, long bytes, int dimension, List<Long> inputShape, String preprocessing,
                     String pooling, String sha256, String source) {
        static ModelInfo of(ModelCache.CachedModel m) {
            List<Long> shape = new ArrayList<>();
            for (long d : m.inputShape()) {
                shape.add(d);
            }
            return new ModelInfo(m.id(), m.file().toString(), m.bytes(), m.dimension(), shape, m.preprocessing(),
                    m.pooling(), m.sha256(), m.source());
        }
    }

    @Command(name = "pull", mixinStandardHelpOptions = true,
            description = "Build the built-in embedding model(s) from the npm package nsfwjs@" + NsfwjsPackage.VERSION
                    + " (downloaded from the npm registry, sha512-checked) with Flywheel's own converter, into the cache.")
    static final class Pull implements Callable<Integer> {
        @Option(names = "--model", paramLabel = "MODEL", defaultValue = "mobilenet_v2", converter = Choice.Converter.class,
                completionCandidates = Choice.Names.class,
                description = "mobilenet_v2 (default: 96-d, fast), inception_v3 (768-d), mobilenet_v2_mac (384-d MAC:"
                        + " max-pooled, keeps small local cues), a full model id, or all")
        Choice model;

        @Option(names = "--from", paramLabel = "TGZ", description = "a local nsfwjs-" + NsfwjsPackage.VERSION
                + ".tgz (from `npm pack nsfwjs@" + NsfwjsPackage.VERSION + "`) instead of downloading")
        Path from;

        @Option(names = "--cache-dir", paramLabel = "DIR", description = "model cache folder (default: $FLYWHEEL_MODELS_DIR,"
                + " else $XDG_CACHE_HOME/flywheel/models, else ~/.cache/flywheel/models)")
        Path cacheDir;

        @picocli.CommandLine.Mixin
        JsonOutput json;

        @Override
        public Integer call() throws Exception {
            PrintStream out = System.out;
            ModelCache cache = cacheDir == null ? ModelCache.user() : new ModelCache(cacheDir);
            long t0 = System.nanoTime();
            NsfwjsPackage pkg;
            if (from != null) {
                pkg = NsfwjsPackage.fromTarball(from);
            } else {
                if (!json.enabled()) {
                    out.println("downloading " + NsfwjsPackage.TARBALL_URL);
                }
                pkg = ModelCache.download(NsfwjsPackage.TARBALL_URL);
            }
            List<BuiltinModel> models = model.models();
            List<ModelInfo> pulled = new ArrayList<>();
            for (BuiltinModel m : models) {
                ModelInfo info = ModelInfo.of(cache.install(m, pkg));
                pulled.add(info);
                if (!json.enabled()) {
                    out.printf(Locale.ROOT, "%s: %d-d (%s pooling), input %s, %,d bytes, sha256 %s%n  -> %s%n", info.id(),
                            info.dimension(), info.pooling(), info.inputShape(), info.bytes(), info.sha256(), info.file());
                }
            }
            double seconds = (System.nanoTime() - t0) / 1e9;
            if (json.enabled()) {
                Map<String, Object> result = new LinkedHashMap<>();
                result.put("source", pkg.origin());
                result.put("integrity", NsfwjsPackage.INTEGRITY);
                result.put("cache_dir", cache.dir().toString());
                result.put("models", pulled);
                result.put("seconds", Math.round(seconds * 1000) / 1000.0);
                Json.print(out, result);
            } else {
                out.printf(Locale.ROOT, "pulled %d model(s) from nsfwjs@%s into %s in %.1f s%n", pulled.size(),
                        NsfwjsPackage.VERSION, cache.dir(), seconds);
            }
            return 0;
        }
    }

    @Command(name = "list", mixinStandardHelpOptions = true,
            description = "The models in the cache with their dimension, input shape and sha256.")
    static final class ListModels implements Callable<Integer> {
        @Option(names = "--cache-dir", paramLabel = "DIR", description = "model cache folder (default as for `pull`)")
        Path cacheDir;

        @picocli.CommandLine.Mixin
        JsonOutput json;

        @Override
        public Integer call() throws Exception {
            PrintStream out = System.out;
            ModelCache cache = cacheDir == null ? ModelCache.user() : new ModelCache(cacheDir);
            List<ModelInfo> models = new ArrayList<>();
            for (ModelCache.CachedModel m : cache.list()) {
                models.add(ModelInfo.of(m));
            }
            if (json.enabled()) {
                Map<String, Object> result = new LinkedHashMap<>();
                result.put("cache_dir", cache.dir().toString());
                result.put("default_model", BuiltinModel.DEFAULT.id());
                result.put("models", models);
                Json.print(out, result);
                return 0;
            }
            for (ModelInfo m : models) {
                out.printf(Locale.ROOT, "%-28s %4d-d  %-7s  input %-20s %,11d bytes  sha256 %s%s%n", m.id(), m.dimension(),
                        m.pooling(), m.inputShape(), m.bytes(), m.sha256(),
                        m.id().equals(BuiltinModel.DEFAULT.id()) ? "  (default)" : "");
            }
            out.printf(Locale.ROOT, "%d model(s) in %s%s%n", models.size(), cache.dir(),
                    models.isEmpty() ? " (run `flywheel models pull`)" : "");
            return 0;
        }
    }
}
