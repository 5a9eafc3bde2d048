package io.flywheel.cli;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;

import io.flywheel.lake.Lake;
import io.flywheel.lake.LakeSnapshot;
import picocli.CommandLine.Command;

/** {@code flywheel lake ...}: the lake's own maintenance. */
@Command(name = "lake", mixinStandardHelpOptions = true, description = "Lake maintenance.",
        subcommands = {LakeCommand.Migrate.class})
final class LakeCommand implements Runnable {
    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        spec.commandLine().usage(System.out);
    }

    /** {@code flywheel lake migrate LAKE}: migrates a lake of an older schema version in place. */
    @Command(name = "migrate", mixinStandardHelpOptions = true,
            description = "Migrate a lake of an older schema version in place (tables and raw files are kept).")
    static final class Migrate implements Callable<Integer> {
        @picocli.CommandLine.Mixin
        LakeLocation location;

        @picocli.CommandLine.Mixin
        JsonOutput json;

        @Override
        public Integer call() {
            String lake = location.uri();
            Lake.Migration r = Lake.migrate(lake, location.options());
            LakeSnapshot s = r.snapshot();
            String from = r.fromSchemaVersion();
            boolean migrated = r.migrated();
            if (json.enabled()) {
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("lake", lake);
                m.put("migrated", migrated);
                m.put("from_schema_version", from);
                m.put("schema_version", r.toSchemaVersion());
                m.put("commit", s.seq());
                m.put("tables", s.tables());
                m.put("tags", s.tags().keySet());
                Map<String, String> models = new LinkedHashMap<>();
                io.flywheel.lake.EmbeddingModels.of(s.properties()).all().forEach(x -> models.put(x.id(), x.column()));
                m.put("embedding_models", models);
                Json.print(System.out, m);
            } else if (migrated) {
                System.out.println("migrated " + lake + " from schema version " + from + " to " + r.toSchemaVersion()
                        + " in lake commit " + s.seq() + ": tables "
                        + s.tables() + ", " + s.tags().size() + " tag(s)");
            } else {
                System.out.println(lake + " is at schema version " + r.toSchemaVersion()
                        + " already (lake commit " + s.seq() + "); nothing to do");
            }
            return 0;
        }
    }
}
