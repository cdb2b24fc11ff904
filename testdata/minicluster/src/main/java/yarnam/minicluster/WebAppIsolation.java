package yarnam.minicluster;

import java.lang.reflect.Field;

import com.google.inject.servlet.GuiceFilter;
import org.apache.hadoop.http.HttpServer2;
import org.apache.hadoop.yarn.webapp.WebApp;
import org.eclipse.jetty.servlet.FilterHolder;

/**
 * Makes each YARN web app in this JVM (the RM's and every NM's) serve its own pages.
 *
 * <p>Why: Hadoop 3.4 registers Guice's GuiceFilter with Jetty by class name, so Jetty builds a
 * GuiceFilter without an injector, and such a filter dispatches through a JVM-wide static pipeline
 * that belongs to whichever web app was built last. In a mini cluster that is the last NM: the RM's
 * port then answers /ws/v1/cluster/... and /proxy/... with 404 (the NM's routes). The web app does
 * keep the GuiceFilter that its own injector made; this class copies that filter's pipeline into the
 * filter Jetty runs, so dispatch no longer goes through the shared static. Each pipeline was already
 * initialised when its own server started.
 */
final class WebAppIsolation {
  private WebAppIsolation() {}

  /** Binds the Jetty-side GuiceFilter of {@code webApp} to {@code webApp}'s own injector. */
  static void isolate(WebApp webApp, String what) {
    if (webApp == null) {
      throw new IllegalStateException(what + ": web app is not running");
    }
    try {
      GuiceFilter own = (GuiceFilter) field(WebApp.class, "guiceFilter").get(webApp);
      Field injected = field(GuiceFilter.class, "injectedPipeline");
      Object pipeline = injected.get(own);
      // The field, not WebApp.getHttpServer(): that getter only exists from Hadoop 3.4 on.
      HttpServer2 server = (HttpServer2) field(WebApp.class, "httpServer").get(webApp);
      FilterHolder holder = server.getWebAppContext().getServletHandler().getFilter("guice");
      if (pipeline == null || holder == null || !(holder.getFilter() instanceof GuiceFilter)) {
        throw new IllegalStateException(what + ": no guice filter/pipeline found");
      }
      injected.set(holder.getFilter(), pipeline);
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException(what + ": Guice or Hadoop web internals changed; the RM REST"
          + " API may answer with another web app's pages", e);
    }
  }

  /** Reads field {@code name} of {@code owner} (declared on {@code cls}). */
  static Object read(Object owner, Class<?> cls, String name) throws ReflectiveOperationException {
    return field(cls, name).get(owner);
  }

  private static Field field(Class<?> cls, String name) throws NoSuchFieldException {
    Field f = cls.getDeclaredField(name);
    f.setAccessible(true);
    return f;
  }
}
