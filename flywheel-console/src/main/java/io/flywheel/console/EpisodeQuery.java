package io.flywheel.console;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.flywheel.lake.Sql;
import io.flywheel.lake.TableSchemas;

/**
 * One page of the episodes table: which rows, in which order.
 *
 * @param offset rows to skip, &ge; 0
 * @param limit rows to return, 1..{@link ConsoleApi#MAX_PAGE}
 * @param sort column to sort by (one of {@link ConsoleApi#SORTABLE}), or null for episode_id
 * @param descending sort direction
 * @param filters exact-match filters by parameter name ({@link ConsoleApi#FILTERS}: robot, task, scene,
 *     operator, outcome, quality)
 * @param text substring of the episode id or task, or null
 * @param flag a quality rule name the episode's quality_flags must contain, or null
 */
public record EpisodeQuery(long offset, int limit, String sort, boolean descending, Map<String, String> filters,
                           String text, String flag) {
    public EpisodeQuery {
        if (offset < 0) {
            throw ApiException.badRequest("offset must be >= 0, got " + offset);
        }
        if (limit < 1 || limit > ConsoleApi.MAX_PAGE) {
            throw ApiException.badRequest("limit must be in 1.." + ConsoleApi.MAX_PAGE + ", got " + limit);
        }
        filters = filters == null ? Map.of() : new LinkedHashMap<>(filters);
        for (String k : filters.keySet()) {
            if (!ConsoleApi.FILTERS.containsKey(k)) {
                throw ApiException.badRequest("unknown filter '" + k + "'; expected one of " + ConsoleApi.FILTERS.keySet());
            }
        }
        filters = java.util.Collections.unmodifiableMap(filters);
        text = text == null || text.isBlank() ? null : text;
        flag = flag == null || flag.isBlank() ? null : flag;
    }

    /** @return the first page of 50 by episode id */
    public static EpisodeQuery firstPage() {
        return new EpisodeQuery(0, 50, null, false, Map.of(), null, null);
    }

    /** @return the Lance SQL filter of this query, or null for none (every value quoted) */
    String sqlFilter() {
        List<String> parts = new ArrayList<>();
        filters.forEach((k, v) -> parts.add(ConsoleApi.FILTERS.get(k) + " = " + Sql.quote(v)));
        if (text != null) {
            String like = Sql.quote("%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%");
            parts.add("(" + TableSchemas.EPISODE_ID + " LIKE " + like + " OR " + TableSchemas.TASK + " LIKE " + like + ")");
        }
        if (flag != null) {
            parts.add("array_has(" + TableSchemas.QUALITY_FLAGS + ", " + Sql.quote(flag) + ")");
        }
        return parts.isEmpty() ? null : String.join(" AND ", parts);
    }
}
