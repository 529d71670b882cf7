package io.lockhygiene.build;

import java.io.IOException;
import java.io.Writer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.StringJoiner;

import javax.annotation.processing.AbstractProcessor;
import javax.annotation.processing.RoundEnvironment;
import javax.annotation.processing.SupportedAnnotationTypes;
import javax.lang.model.SourceVersion;
import javax.lang.model.element.Element;
import javax.lang.model.element.ExecutableElement;
import javax.lang.model.element.Modifier;
import javax.lang.model.element.TypeElement;
import javax.lang.model.element.TypeParameterElement;
import javax.lang.model.type.DeclaredType;
import javax.lang.model.type.ExecutableType;
import javax.lang.model.type.TypeKind;
import javax.lang.model.type.TypeMirror;
import javax.lang.model.type.TypeVariable;
import javax.lang.model.util.ElementFilter;
import javax.tools.Diagnostic;

/**
 * Writes the final leaf of each {@link Forwarding} class, as HikariCP's build writes its final proxies:
 * the hand-written abstract classes form the chain and hold all behaviour; the leaf only forwards what
 * they leave open. The method list comes from the compiler's own view of the interfaces (the
 * {@code --release} API the module compiles against), so the output is the same on any JDK that builds
 * it, and a method a future interface adds is forwarded without anyone editing a list.
 */
@SupportedAnnotationTypes("io.lockhygiene.build.Forwarding")
public final class ForwardingProcessor extends AbstractProcessor {

    @Override
    public SourceVersion getSupportedSourceVersion() {
        return SourceVersion.latestSupported();
    }

    @Override
    public boolean process(Set<? extends TypeElement> annotations, RoundEnvironment round) {
        for (Element e : round.getElementsAnnotatedWith(Forwarding.class)) {
            TypeElement base = (TypeElement) e;
            try {
                write(base, base.getAnnotation(Forwarding.class));
            } catch (IOException | RuntimeException ex) {
                processingEnv.getMessager().printMessage(Diagnostic.Kind.ERROR,
                        "cannot write the forwarding leaf of " + base + ": " + ex, base);
            }
        }
        return true;
    }

    private void write(TypeElement base, Forwarding spec) throws IOException {
        if (!base.getModifiers().contains(Modifier.ABSTRACT)) {
            processingEnv.getMessager().printMessage(Diagnostic.Kind.ERROR, "@Forwarding goes on an abstract class", base);
            return;
        }
        String pkg = processingEnv.getElementUtils().getPackageOf(base).getQualifiedName().toString();
        StringBuilder out = new StringBuilder();
        out.append("// Generated at build time by io.lockhygiene.build.ForwardingProcessor from ")
                .append(base.getSimpleName()).append(". Do not edit: behaviour lives in the hand-written base.\n")
                .append("package ").append(pkg).append(";\n\n")
                .append("@javax.annotation.processing.Generated(\"io.lockhygiene.build.ForwardingProcessor\")\n")
                .append("@SuppressWarnings({\"deprecation\", \"unchecked\"})\n")
                .append(base.getModifiers().contains(Modifier.PUBLIC) ? "public " : "")
                .append(spec.extensible() ? "" : "final ").append("class ").append(spec.leaf()).append(typeParameters(base))
                .append(" extends ").append(base.getSimpleName()).append(typeArguments(base)).append(" {\n");
        for (ExecutableElement c : ElementFilter.constructorsIn(base.getEnclosedElements())) {
            if (c.getModifiers().contains(Modifier.PRIVATE)) {
                continue;
            }
            StringJoiner params = new StringJoiner(", ");
            StringJoiner args = new StringJoiner(", ");
            int i = 0;
            for (var p : c.getParameters()) {
                params.add(p.asType() + " a" + i);
                args.add("a" + i++);
            }
            out.append("\n    ").append(c.getModifiers().contains(Modifier.PUBLIC) ? "public "
                    : c.getModifiers().contains(Modifier.PROTECTED) ? "protected " : "")
                    .append(spec.leaf()).append('(').append(params).append(')').append(throwsClause(c.getThrownTypes()))
                    .append(" {\n        super(").append(args).append(");\n    }\n");
        }
        DeclaredType self = (DeclaredType) base.asType();
        for (ExecutableElement m : openMethods(base)) {
            ExecutableType t = (ExecutableType) processingEnv.getTypeUtils().asMemberOf(self, m);
            StringJoiner params = new StringJoiner(", ");
            StringJoiner args = new StringJoiner(", ");
            List<? extends TypeMirror> types = t.getParameterTypes();
            for (int i = 0; i < types.size(); i++) {
                String type = types.get(i).toString();
                if (m.isVarArgs() && i == types.size() - 1) {
                    type = type.substring(0, type.length() - 2) + "...";
                }
                params.add(type + " a" + i);
                args.add("a" + i);
            }
            TypeMirror ret = t.getReturnType();
            out.append("\n    @Override\n    public ").append(methodTypeVariables(t)).append(ret).append(' ')
                    .append(m.getSimpleName()).append('(').append(params).append(')')
                    .append(throwsClause(t.getThrownTypes())).append(" {\n");
            if (spec.noop()) {
                if (ret.getKind() != TypeKind.VOID) {
                    out.append("        return ").append(defaultValue(ret)).append(";\n");
                }
            } else if (isWrapperMethod(m)) {
                // java.sql.Wrapper: this object first, then whatever the wrapped object reaches (pgjdbc's own
                // types), so nested wrappers are found and work is never done twice
                out.append(m.getSimpleName().contentEquals("unwrap")
                        ? "        return a0.isInstance(this) ? a0.cast(this) : delegate.unwrap(a0);\n"
                        : "        return a0.isInstance(this) || delegate.isWrapperFor(a0);\n");
            } else {
                out.append("        ").append(ret.getKind() == TypeKind.VOID ? "" : "return ").append("delegate.")
                        .append(m.getSimpleName()).append('(').append(args).append(");\n");
                if (recordsBind(spec, m, types)) {
                    StringJoiner replayArgs = new StringJoiner(", ");
                    StringJoiner values = new StringJoiner(", ");
                    replayArgs.add("i");
                    for (int i = 1; i < types.size(); i++) {
                        replayArgs.add("a" + i);
                        values.add("a" + i);
                    }
                    out.append("        var recorded = ").append(spec.bindsField()).append(";\n        if (recorded != null) {\n")
                            .append("            recorded.set(a0, \"").append(m.getSimpleName())
                            .append("\", (t, i) -> t.").append(m.getSimpleName()).append('(').append(replayArgs)
                            .append(')').append(values.length() == 0 ? "" : ", " + values).append(");\n        }\n");
                }
            }
            out.append("    }\n");
        }
        out.append("}\n");
        try (Writer w = processingEnv.getFiler().createSourceFile(pkg + "." + spec.leaf(), base).openWriter()) {
            w.write(out.toString());
        }
    }

    /**
     * Every method of the interfaces {@code base} implements (abstract or default, most specific interface
     * first) that no class of its chain implements, once per signature.
     */
    private List<ExecutableElement> openMethods(TypeElement base) {
        List<ExecutableElement> implemented = new ArrayList<>();
        Deque<TypeElement> interfaces = new ArrayDeque<>();
        Set<TypeElement> seen = new LinkedHashSet<>();
        for (TypeElement k = base; k != null; k = superclass(k)) {
            for (ExecutableElement m : ElementFilter.methodsIn(k.getEnclosedElements())) {
                if (!m.getModifiers().contains(Modifier.ABSTRACT)) {
                    implemented.add(m);
                }
            }
            for (TypeMirror i : k.getInterfaces()) {
                interfaces.add((TypeElement) processingEnv.getTypeUtils().asElement(i));
            }
        }
        Map<String, ExecutableElement> open = new LinkedHashMap<>();
        while (!interfaces.isEmpty()) {
            TypeElement i = interfaces.poll();
            if (!seen.add(i)) {
                continue;
            }
            for (ExecutableElement m : ElementFilter.methodsIn(i.getEnclosedElements())) {
                Set<Modifier> mods = m.getModifiers();
                if (mods.contains(Modifier.STATIC) || mods.contains(Modifier.PRIVATE) || isImplemented(m, implemented, base)) {
                    continue;
                }
                open.putIfAbsent(signature(m), m);
            }
            for (TypeMirror s : i.getInterfaces()) {
                interfaces.add((TypeElement) processingEnv.getTypeUtils().asElement(s));
            }
        }
        return new ArrayList<>(open.values());
    }

    /** A {@code PreparedStatement.setXxx(int index, ...)} of a class that records its binds. */
    private static boolean recordsBind(Forwarding spec, ExecutableElement m, List<? extends TypeMirror> types) {
        return !spec.bindsField().isEmpty() && m.getSimpleName().toString().startsWith("set")
                && ((TypeElement) m.getEnclosingElement()).getQualifiedName().contentEquals("java.sql.PreparedStatement")
                && !types.isEmpty() && types.get(0).getKind() == TypeKind.INT && m.getReturnType().getKind() == TypeKind.VOID;
    }

    private static boolean isWrapperMethod(ExecutableElement m) {
        return ((TypeElement) m.getEnclosingElement()).getQualifiedName().contentEquals("java.sql.Wrapper");
    }

    private boolean isImplemented(ExecutableElement m, List<ExecutableElement> implemented, TypeElement base) {
        for (ExecutableElement e : implemented) {
            if (processingEnv.getElementUtils().overrides(e, m, base)
                    || (e.getSimpleName().equals(m.getSimpleName()) && signature(e).equals(signature(m)))) {
                return true;
            }
        }
        return false;
    }

    private String signature(ExecutableElement m) {
        StringJoiner j = new StringJoiner(",", m.getSimpleName() + "(", ")");
        for (var p : m.getParameters()) {
            j.add(processingEnv.getTypeUtils().erasure(p.asType()).toString());
        }
        return j.toString();
    }

    private TypeElement superclass(TypeElement k) {
        TypeMirror s = k.getSuperclass();
        if (s.getKind() != TypeKind.DECLARED) {
            return null;
        }
        TypeElement e = (TypeElement) processingEnv.getTypeUtils().asElement(s);
        return e.getQualifiedName().contentEquals("java.lang.Object") ? null : e;
    }

    private static String typeParameters(TypeElement base) {
        if (base.getTypeParameters().isEmpty()) {
            return "";
        }
        StringJoiner j = new StringJoiner(", ", "<", ">");
        for (TypeParameterElement p : base.getTypeParameters()) {
            StringJoiner bounds = new StringJoiner(" & ");
            for (TypeMirror b : p.getBounds()) {
                if (!b.toString().equals("java.lang.Object")) {
                    bounds.add(b.toString());
                }
            }
            j.add(p.getSimpleName() + (bounds.length() == 0 ? "" : " extends " + bounds));
        }
        return j.toString();
    }

    private static String typeArguments(TypeElement base) {
        if (base.getTypeParameters().isEmpty()) {
            return "";
        }
        StringJoiner j = new StringJoiner(", ", "<", ">");
        for (TypeParameterElement p : base.getTypeParameters()) {
            j.add(p.getSimpleName());
        }
        return j.toString();
    }

    private static String methodTypeVariables(ExecutableType t) {
        if (t.getTypeVariables().isEmpty()) {
            return "";
        }
        StringJoiner j = new StringJoiner(", ", "<", "> ");
        for (TypeVariable v : t.getTypeVariables()) {
            String bound = v.getUpperBound().toString();
            j.add(v + (bound.equals("java.lang.Object") ? "" : " extends " + bound));
        }
        return j.toString();
    }

    private static String throwsClause(List<? extends TypeMirror> thrown) {
        if (thrown.isEmpty()) {
            return "";
        }
        StringJoiner j = new StringJoiner(", ", " throws ", "");
        for (TypeMirror t : thrown) {
            j.add(t.toString());
        }
        return j.toString();
    }

    private static String defaultValue(TypeMirror t) {
        switch (t.getKind()) {
            case BOOLEAN:
                return "false";
            case CHAR:
                return "(char) 0";
            case BYTE:
            case SHORT:
            case INT:
            case LONG:
            case FLOAT:
            case DOUBLE:
                return "(" + t + ") 0";
            default:
                return "null";
        }
    }
}
