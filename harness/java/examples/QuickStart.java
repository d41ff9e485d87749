// harness/java/examples/QuickStart.java
import dev.benchgate.harness.Harness;
import dev.benchgate.harness.Unsupported;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpRequest.BodyPublishers;
import java.net.http.HttpResponse.BodyHandlers;

public final class QuickStart {
    public static void main(String[] args) {
        HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        Harness.run("QuickStart", w -> { // called once per worker thread; the client is shared
            if (w.tls || w.httpVersion.equals("2")) {
                throw new Unsupported("plain HTTP/1.1 only");
            }
            byte[] body = w.body();
            HttpRequest request = HttpRequest.newBuilder(URI.create(w.url))
                    .method(w.method, body == null ? BodyPublishers.noBody() : BodyPublishers.ofByteArray(body))
                    .build();
            return () -> client.send(request, BodyHandlers.discarding()).statusCode();
        });
    }
}
