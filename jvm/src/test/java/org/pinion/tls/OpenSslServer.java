// Runs `openssl s_server -www` on 127.0.0.1 port 0 for one test and reads the port it bound.
package org.pinion.tls;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

public final class OpenSslServer implements AutoCloseable {
    final Process process;
    public final int port;

    public OpenSslServer(TestPki pki, String cert, String key, String chain) throws IOException {
        List<String> command = new ArrayList<>(List.of("openssl", "s_server", "-accept", "127.0.0.1:0", "-cert", cert, "-key", key, "-www"));
        if (chain != null) command.addAll(List.of("-cert_chain", chain));
        process = new ProcessBuilder(command).directory(pki.dir.toFile()).redirectErrorStream(true).start();
        BufferedReader reader = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
        int found = -1;
        String line;
        while ((line = reader.readLine()) != null) {
            if (line.startsWith("ACCEPT ")) {
                found = Integer.parseInt(line.substring(line.lastIndexOf(':') + 1).trim());
                break;
            }
        }
        if (found < 0) {
            process.destroy();
            throw new IOException("openssl s_server did not start");
        }
        port = found;
        Thread drain = new Thread(() -> {
            try {
                while (reader.readLine() != null) {
                    continue;
                }
            } catch (IOException e) {
                return;
            }
        });
        drain.setDaemon(true);
        drain.start();
    }

    @Override
    public void close() throws InterruptedException {
        process.destroy();
        process.waitFor(5, TimeUnit.SECONDS);
    }
}
