package io.lockhygiene.it.bed;

import java.util.Map;

/**
 * Where the bed's servers answer: a plain-pgjdbc URL per route, the credentials, and what the bed is
 * made of (for the run's banner). URLs carry no password; it goes in connection properties.
 */
public record BedEndpoints(String source, Map<Route, String> urls, String user, String password,
                           String postgresVersion, String pgbouncerVersion) {

    public String url(Route route) {
        String url = urls.get(route);
        if (url == null) {
            throw new IllegalStateException("The test bed has no " + route.label() + " endpoint");
        }
        return url;
    }
}
