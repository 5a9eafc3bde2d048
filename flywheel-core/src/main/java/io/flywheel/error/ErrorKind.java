package io.flywheel.error;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.NoSuchFileException;
import java.util.Locale;

/**
 * The kind of a failure, as a stable name for machine-readable output ({@code --json}'s {@code "kind"}), in place of a
 * Java class name: scripts branch on it, and it does not change when a class is renamed or moved.
 *
 * <ul>
 *   <li>{@link #BAD_INPUT} {@code bad_input}: a {@link BadInputException} (and any other {@link FlywheelException}
 *       not below), an {@link IllegalArgumentException}, and
 *       every other {@link IOException} (the format errors of the readers, e.g. {@code McapFormatException},
 *       {@code BagFormatException}, {@code IngestException}, extend it: a file that is not what was expected);</li>
 *   <li>{@link #NOT_FOUND} {@code not_found}: a {@link NotFoundException}, a {@link NoSuchFileException};</li>
 *   <li>{@link #CONFLICT} {@code conflict}: a {@link ConflictException};</li>
 *   <li>{@link #STORAGE_UNAVAILABLE} {@code storage_unavailable}: a {@link StorageUnavailableException}, an
 *       {@link AccessDeniedException};</li>
 *   <li>{@link #INTERNAL} {@code internal}: anything else, which is a bug.</li>
 * </ul>
 */
public enum ErrorKind {
    BAD_INPUT, NOT_FOUND, CONFLICT, STORAGE_UNAVAILABLE, INTERNAL;

    /** @return the name in output: lower snake case, e.g. {@code bad_input} */
    public String id() {
        return name().toLowerCase(Locale.ROOT);
    }

    /**
     * @param e a failure; an {@link UncheckedIOException} is classified by its cause
     * @return its kind
     */
    public static ErrorKind of(Throwable e) {
        Throwable t = e instanceof UncheckedIOException u && u.getCause() != null ? u.getCause() : e;
        if (t instanceof NotFoundException || t instanceof NoSuchFileException) {
            return NOT_FOUND;
        }
        if (t instanceof ConflictException) {
            return CONFLICT;
        }
        if (t instanceof StorageUnavailableException || t instanceof AccessDeniedException) {
            return STORAGE_UNAVAILABLE;
        }
        if (t instanceof FlywheelException || t instanceof IllegalArgumentException || t instanceof IOException) {
            return BAD_INPUT;
        }
        return INTERNAL;
    }
}
