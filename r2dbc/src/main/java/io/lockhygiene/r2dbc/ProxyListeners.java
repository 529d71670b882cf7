package io.lockhygiene.r2dbc;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

import io.r2dbc.proxy.listener.ProxyExecutionListener;

/**
 * The {@code proxyListener} option of a URL, read as r2dbc-proxy's provider reads it: a listener, a class, a
 * class name, comma-separated names, or a collection of them.
 */
final class ProxyListeners {
    private ProxyListeners() {
    }

    static List<ProxyExecutionListener> of(Object option) {
        List<ProxyExecutionListener> out = new ArrayList<>();
        add(option, out);
        return out;
    }

    private static void add(Object option, List<ProxyExecutionListener> out) {
        if (option instanceof Collection) {
            for (Object o : (Collection<?>) option) {
                add(o, out);
            }
        } else if (option instanceof ProxyExecutionListener) {
            out.add((ProxyExecutionListener) option);
        } else if (option instanceof Class) {
            out.add(instance((Class<?>) option));
        } else if (option instanceof String) {
            for (String name : ((String) option).split(",")) {
                try {
                    out.add(instance(Class.forName(name.trim())));
                } catch (ClassNotFoundException e) {
                    throw new IllegalArgumentException(name + " is not a proxy listener class on the class path", e);
                }
            }
        } else {
            throw new IllegalArgumentException(option + " is not a proxy listener");
        }
    }

    private static ProxyExecutionListener instance(Class<?> type) {
        try {
            Object o = type.getDeclaredConstructor().newInstance();
            if (!(o instanceof ProxyExecutionListener)) {
                throw new IllegalArgumentException(type.getName() + " is not a ProxyExecutionListener");
            }
            return (ProxyExecutionListener) o;
        } catch (ReflectiveOperationException e) {
            throw new IllegalArgumentException("Could not make " + type.getName(), e);
        }
    }
}
