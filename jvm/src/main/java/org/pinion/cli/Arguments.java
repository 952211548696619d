// Command-line options as `pinion` parses them: --name VALUE or --name=VALUE, flags, positionals, usage errors.
package org.pinion.cli;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** Parsed options of one command; every misuse is a {@link UsageException} (exit 2). */
final class Arguments {
    /** A usage error: exit code 2 with a "see: ... --help" line. */
    static final class UsageException extends Exception {
        private static final long serialVersionUID = 1L;

        UsageException(String message) { super(message); }
    }

    private final Map<String, List<String>> values = new HashMap<>();
    private final List<String> flags = new ArrayList<>();
    final List<String> positional = new ArrayList<>();
    boolean help;

    Arguments(List<String> args, Set<String> valueOptions, Set<String> repeatable, Set<String> flagOptions) throws UsageException {
        for (int i = 0; i < args.size(); i++) {
            String arg = args.get(i);
            if (arg.equals("--help") || arg.equals("-h")) {
                help = true;
                continue;
            }
            if (arg.startsWith("--")) {
                String name = arg.substring(2);
                String value = null;
                int eq = name.indexOf('=');
                if (eq >= 0) {
                    value = name.substring(eq + 1);
                    name = name.substring(0, eq);
                }
                if (valueOptions.contains(name)) {
                    if (value == null) {
                        if (i + 1 >= args.size()) throw new UsageException("--" + name + " needs a value");
                        value = args.get(++i);
                    }
                    List<String> list = values.computeIfAbsent(name, k -> new ArrayList<>());
                    if (!repeatable.contains(name) && !list.isEmpty()) throw new UsageException("--" + name + " given more than once");
                    list.add(value);
                } else if (flagOptions.contains(name) && value == null) {
                    if (flags.contains(name)) throw new UsageException("--" + name + " given more than once");
                    flags.add(name);
                } else {
                    throw new UsageException("unknown option --" + name);
                }
            } else {
                positional.add(arg);
            }
        }
    }

    String value(String name) {
        List<String> list = values.get(name);
        return list == null ? null : list.get(0);
    }

    List<String> values(String name) { return values.getOrDefault(name, List.of()); }

    String required(String name) throws UsageException {
        String value = value(name);
        if (value == null) throw new UsageException("--" + name + " is required");
        return value;
    }

    boolean flag(String name) { return flags.contains(name); }

    List<String> positional(List<String> names) throws UsageException {
        if (positional.size() < names.size()) throw new UsageException(names.get(positional.size()) + " is required");
        if (positional.size() > names.size()) throw new UsageException("unexpected argument " + positional.get(names.size()));
        return positional;
    }

    /** The durations of {@code pinion}: 30d, 12h, 90m, 3600s, 1y, and sums such as 1d12h. */
    static long seconds(String text, String option) throws UsageException {
        long total = 0;
        StringBuilder digits = new StringBuilder();
        UsageException bad = new UsageException("--" + option + ": \"" + text + "\" is not a duration like 30d, 12h, 90m, 3600s or 1y");
        if (text.isEmpty()) throw bad;
        for (char c : text.toCharArray()) {
            if (c >= '0' && c <= '9') {
                digits.append(c);
                continue;
            }
            long unit;
            switch (c) {
                case 's': unit = 1; break;
                case 'm': unit = 60; break;
                case 'h': unit = 3600; break;
                case 'd': unit = 86_400; break;
                case 'y': unit = 31_536_000; break;
                default: throw bad;
            }
            long number;
            try {
                number = Long.parseLong(digits.toString());
            } catch (NumberFormatException e) {
                throw bad;
            }
            if (number <= 0) throw bad;
            try {
                total = Math.addExact(total, Math.multiplyExact(number, unit));
            } catch (ArithmeticException e) {
                throw bad;
            }
            if (total > org.pinion.trust.Limits.MAX_INTEGER) throw bad;
            digits.setLength(0);
        }
        if (digits.length() > 0 || total <= 0) throw bad;
        return total;
    }

    /** HOST:PORT or [IPv6]:PORT with a port in 1...65535. */
    static String[] splitHostPort(String text, String option) throws UsageException {
        String host;
        String port;
        UsageException shape = new UsageException(option + ": \"" + text + "\" is not HOST:PORT or ADDRESS:PORT (IPv6 in brackets: [::1]:PORT)");
        if (text.startsWith("[")) {
            int close = text.indexOf(']');
            if (close < 0 || !text.startsWith(":", close + 1)) throw shape;
            host = text.substring(1, close);
            port = text.substring(close + 2);
        } else {
            int colon = text.lastIndexOf(':');
            if (colon < 0 || text.indexOf(':') != colon) throw shape;
            host = text.substring(0, colon);
            port = text.substring(colon + 1);
        }
        if (host.isEmpty() || port.isEmpty() || port.length() > 5 || !port.chars().allMatch(c -> c >= '0' && c <= '9')
                || Integer.parseInt(port) < 1 || Integer.parseInt(port) > 65535) {
            throw new UsageException(option + ": \"" + text + "\" is not HOST:PORT with a port in 1...65535");
        }
        return new String[] {host, port};
    }
}
