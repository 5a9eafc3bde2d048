package io.flywheel.ros.msgdef;

/** Whether and how a field is an array: {@code T}, {@code T[N]}, {@code T[<=N]}, {@code T[]}. */
public enum ArrayKind {
    /** a single value */
    NONE,
    /** {@code T[N]}: exactly N elements, serialized without a count */
    FIXED,
    /** {@code T[<=N]} (IDL {@code sequence<T, N>}): a uint32 count of at most N, then the elements */
    BOUNDED,
    /** {@code T[]} (IDL {@code sequence<T>}): a uint32 count, then the elements */
    UNBOUNDED
}
