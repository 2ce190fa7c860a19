package io.streamcache.log.internal;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.management.InstanceAlreadyExistsException;
import javax.management.InstanceNotFoundException;
import javax.management.JMException;
import javax.management.ObjectName;
import java.lang.management.ManagementFactory;

/**
 * Registers the log's MBeans (writer, directory, historical reads) with the platform MBean
 * server as {@code io.streamcache:type=<type>,name=<name>}: thread-safe (stateless).
 *
 * <p>Unlike the cache's and the cache manager's MBeans, a name already taken does not fail: the
 * log opens inside a store whose durability must not depend on monitoring, so the second
 * registration is skipped with a WARN (on the thread that builds the store, never the data path)
 * and its component runs without an MBean.
 */
public final class LogMBeans {
    private static final Logger LOG = LoggerFactory.getLogger(LogMBeans.class);

    private LogMBeans() {
    }

    /**
     * @return the name it was registered under, or null if it was not (the name was taken).
     */
    public static ObjectName register(final String type, final String name, final Object mbean) {
        final ObjectName objectName;
        try {
            objectName = new ObjectName("io.streamcache:type=" + type + ",name=" + ObjectName.quote(name));
        } catch (final JMException e) {
            throw new IllegalArgumentException("type=" + type + " name=" + name + " make no MBean name: " + e.getMessage(), e);
        }
        try {
            ManagementFactory.getPlatformMBeanServer().registerMBean(mbean, objectName);
            return objectName;
        } catch (final InstanceAlreadyExistsException e) {
            LOG.warn("MBean {} is registered already (another log or store of that name): this one has no MBean", objectName);
            return null;
        } catch (final JMException e) {
            throw new IllegalStateException("could not register MBean " + objectName + ": " + e.getMessage(), e);
        }
    }

    /**
     * Unregisters what {@link #register} registered; null and names gone already are ignored.
     */
    public static void unregister(final ObjectName objectName) {
        if (objectName == null) {
            return;
        }
        try {
            ManagementFactory.getPlatformMBeanServer().unregisterMBean(objectName);
        } catch (final InstanceNotFoundException e) {
            // Unregistered already.
        } catch (final JMException e) {
            LOG.debug("could not unregister MBean {}", objectName, e);
        }
    }
}
