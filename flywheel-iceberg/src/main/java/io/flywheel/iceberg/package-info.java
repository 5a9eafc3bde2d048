/**
 * Training sets as Apache Iceberg tables: {@link io.flywheel.iceberg.IcebergExport} writes a set's samples and
 * episodes as Parquet data files into a JDBC catalog (Iceberg table spec v2), one snapshot per training-set tag,
 * tagged with it, so that any Iceberg engine queries the sets a lake holds and time-travels to each.
 */
package io.flywheel.iceberg;
