package io.lockhygiene.layout;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A layer order: packages listed from the top down, several to a layer where they are peers that do not know
 * each other. A package may use only packages of the layers below its own; a package of the tree that is in no
 * layer is a violation too (a new package says where it belongs).
 */
final class Layers {
    private final Map<String, Integer> layerOf = new LinkedHashMap<>();
    private final List<String> names = new ArrayList<>();

    /** Each argument is one layer: its name, a colon, its packages separated by spaces. */
    Layers(String... layers) {
        for (String layer : layers) {
            int colon = layer.indexOf(':');
            names.add(layer.substring(0, colon).trim());
            for (String p : layer.substring(colon + 1).trim().split("\\s+")) {
                if (layerOf.put(p, names.size() - 1) != null) {
                    throw new IllegalArgumentException(p + " is in two layers");
                }
            }
        }
    }

    /** Every arrow that does not point down, every package in no layer, every layer naming no package; empty when none. */
    List<String> violations(ImportGraph graph) {
        List<String> found = new ArrayList<>();
        for (String p : graph.packages()) {
            if (!layerOf.containsKey(p)) {
                found.add(p + " is in no layer: add it to the layer order");
            }
        }
        for (String p : layerOf.keySet()) {
            if (!graph.packages().contains(p)) {
                found.add(p + " is in the layer order but not in the sources");
            }
        }
        for (String from : graph.packages()) {
            Integer own = layerOf.get(from);
            for (Map.Entry<String, Set<String>> use : graph.usesOf(from).entrySet()) {
                Integer target = layerOf.get(use.getKey());
                if (own != null && target != null && target <= own) {
                    found.add(from + " (" + names.get(own) + ") uses " + use.getKey() + " ("
                            + names.get(target) + (target.equals(own) ? ", its own layer" : ", a layer above") + "): "
                            + use.getValue());
                }
            }
        }
        for (Set<String> cycle : graph.cycles()) {
            found.add("packages in a cycle: " + cycle);
        }
        return found;
    }

    @Override
    public String toString() {
        return names + " " + Arrays.toString(layerOf.keySet().toArray());
    }
}
