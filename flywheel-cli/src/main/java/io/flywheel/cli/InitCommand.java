package io.flywheel.cli;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;

import io.flywheel.lake.Lake;
import io.flywheel.lake.TableSchemas;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code flywheel init LAKE}: creates an empty lake (raw_files, episodes, frames tables). The policy (a folder of its
 * own, an existing lake refused unless {@code --exist-ok}) is {@link Lake#init}'s.
 */
@Command(name = "init", mixinStandardHelpOptions = true,
        description = "Create an empty lake in a local folder or at an s3:// URI. S3 settings come from the options,"
                + " from the file named by FLYWHEEL_CONFIG, or from AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID,"
                + " AWS_SECRET_ACCESS_KEY and AWS_REGION.")
final class InitCommand implements Callable<Integer> {
    @Mixin
    LakeLocation location;

    @Option(names = "--exist-ok", description = "succeed, changing nothing, when a lake already exists there")
    boolean existOk;

    @Mixin
    JsonOutput json;

    @Override
    public Integer call() {
        try (Lake l = Lake.init(location.uri(), location.options().withExistOk(existOk))) {
            if (json.enabled()) {
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("lake", l.location());
                m.put("created", l.created());
                m.put("tables", TableSchemas.CORE_TABLES);
                Json.print(System.out, m);
            } else if (!l.created()) {
                System.out.println("lake " + l.location() + " already exists; left as it is");
            } else {
                System.out.println("created lake " + l.location() + " with tables "
                        + String.join(", ", TableSchemas.CORE_TABLES) + " (version 1)");
            }
        }
        return 0;
    }
}
