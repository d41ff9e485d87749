import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import dev.benchgate.harness.Harness;
import dev.benchgate.harness.Workload;
import org.apache.hc.client5.http.classic.methods.HttpUriRequestBase;
import org.apache.hc.client5.http.config.ConnectionConfig;
import org.apache.hc.client5.http.config.RequestConfig;
import org.apache.hc.client5.http.impl.classic.CloseableHttpClient;
import org.apache.hc.client5.http.impl.classic.HttpClients;
import org.apache.hc.client5.http.impl.io.PoolingHttpClientConnectionManagerBuilder;
import org.apache.hc.core5.http.ContentType;
import org.apache.hc.core5.http.io.entity.ByteArrayEntity;
import org.apache.hc.core5.http.io.entity.EntityUtils;
import org.apache.hc.core5.util.Timeout;

/**
 * The Java command client of scripts/gate-quality-base.sh (CLIENT=java): Apache
 * HttpClient 5 (classic API, one pooled client, a connection per worker) on
 * benchgate's Java harness, written into a throwaway repository as a team's own
 * client would be. Its committed setting: the file `burn_ns` in its working
 * directory, whitespace-separated tokens, `N` (every scenario) or `SCENARIO=N`
 * (BENCHGATE_SCENARIO's), the CPU in nanoseconds each worker spins (on its own
 * thread's CPU clock) after each request, inside the timed section: the
 * regression the study injects. Build: javac -cp 'lib/*' -d out BurnClient.java.
 */
public final class BurnClient {
    public static void main(String[] args) throws Exception {
        Workload cfg = Workload.fromEnvOrExit("BurnClient");
        long burnNs = burnNs(Files.readString(Path.of("burn_ns")), System.getenv("BENCHGATE_SCENARIO"));
        Timeout timeout = Timeout.ofMilliseconds(cfg.timeoutMs);
        CloseableHttpClient client = HttpClients.custom()
                .setConnectionManager(PoolingHttpClientConnectionManagerBuilder.create()
                        .setMaxConnTotal(cfg.concurrency)
                        .setMaxConnPerRoute(cfg.concurrency)
                        .setDefaultConnectionConfig(ConnectionConfig.custom()
                                .setConnectTimeout(timeout).setSocketTimeout(timeout).build())
                        .build())
                .setDefaultRequestConfig(RequestConfig.custom()
                        .setConnectionRequestTimeout(timeout).setResponseTimeout(timeout).build())
                .disableAutomaticRetries()
                .disableRedirectHandling()
                .disableContentCompression()
                .disableCookieManagement()
                .build();
        URI uri = URI.create(cfg.url);
        byte[] body = cfg.body();
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        Harness.run(cfg, w -> () -> {
            HttpUriRequestBase request = new HttpUriRequestBase(w.method, uri);
            if (body != null) {
                request.setEntity(new ByteArrayEntity(body, ContentType.APPLICATION_OCTET_STREAM));
            }
            int status = client.execute(request, response -> {
                EntityUtils.consume(response.getEntity());
                return response.getCode();
            });
            if (burnNs > 0) {
                long end = threads.getCurrentThreadCpuTime() + burnNs;
                while (threads.getCurrentThreadCpuTime() < end) {
                    Thread.onSpinWait();
                }
            }
            return status;
        });
    }

    /** The spin for {@code scenario}: its `SCENARIO=N` token, else a bare `N`, else 0. */
    static long burnNs(String setting, String scenario) {
        long all = 0;
        for (String token : setting.trim().split("\\s+")) {
            int eq = token.indexOf('=');
            if (eq < 0 && !token.isEmpty()) {
                all = Long.parseLong(token);
            } else if (eq > 0 && token.substring(0, eq).equals(scenario)) {
                return Long.parseLong(token.substring(eq + 1));
            }
        }
        return all;
    }

    private BurnClient() {}
}
