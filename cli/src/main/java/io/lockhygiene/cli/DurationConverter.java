package io.lockhygiene.cli;

import java.time.Duration;

import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

import io.lockhygiene.internal.util.Durations;

/** The settings' duration syntax on the command line too: 0, 500ms, 30s, 5m; a bare number is milliseconds. */
final class DurationConverter implements ITypeConverter<Duration> {
    @Override
    public Duration convert(String value) {
        try {
            return Duration.ofMillis(Durations.parseMillis(value));
        } catch (IllegalArgumentException e) {
            throw new TypeConversionException(e.getMessage());
        }
    }
}
