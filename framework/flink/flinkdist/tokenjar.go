package flinkdist

import (
	"archive/zip"
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/internal/atomicfile"
	"github.com/yarn-am/yarn-am/internal/classfile"
)

// The delegation-token jar (issue 45): Flink's JobManager and TaskManagers read their Hadoop token
// file once, so a job that outlives its HDFS tokens' maximum lifetime loses HDFS although the AM
// obtains new ones. Flink 1.17 and later (1.20 and 2.x alike) have a delegation-token framework: the
// JobManager's DelegationTokenManager loads every DelegationTokenProvider on the classpath
// (java.util.ServiceLoader), asks it for tokens again when 75% of the time to the validUntil it
// returned has passed (security.delegation.tokens.renewal.time-ratio), and hands the bytes to the
// DelegationTokenReceiver of the same service name in the JobManager and in every TaskManager.
// yarn-am's provider reads the token file the AM keeps current; its receiver adds those tokens to
// the JVM's current Hadoop user. The classes are written here (internal/classfile's writer), not
// compiled: a JRE may have no javac, and yarn-am is one binary without a Java build step.

// The names the AM, the launcher and the jar's classes share.
const (
	// EnvTokens is the environment variable naming the Hadoop token storage file (HDTS) the AM keeps
	// current; the provider reads it whole each time Flink asks.
	EnvTokens = "YARN_AM_FLINK_TOKENS"
	// EnvTokensEvery is the environment variable holding, in decimal milliseconds, how long the tokens
	// the provider returns stay good: validUntil is now plus this, and Flink asks again at its ratio
	// of that.
	EnvTokensEvery = "YARN_AM_FLINK_TOKENS_EVERY_MS"
	// tokenService is the provider's and the receiver's service name, which pairs them in Flink and
	// names them in its keys (security.delegation.token.provider.yarn-am.enabled): yarn-am's own
	// name, the one its applications are tagged with.
	tokenService = contract.ApplicationTag
	// TokenJarName is the jar's file name in a container.
	TokenJarName = "yarn-am-flink-tokens.jar"
)

// The Flink, Hadoop and JDK names the classes use, in the class file's internal form.
const (
	tokenProviderClass  = "yarnam/flink/TokenProvider"
	tokenReceiverClass  = "yarnam/flink/TokenReceiver"
	flinkProvider       = "org/apache/flink/core/security/token/DelegationTokenProvider"
	flinkReceiver       = "org/apache/flink/core/security/token/DelegationTokenReceiver"
	flinkObtained       = flinkProvider + "$ObtainedDelegationTokens"
	flinkConfiguration  = "org/apache/flink/configuration/Configuration"
	hadoopCredentials   = "org/apache/hadoop/security/Credentials"
	hadoopUGI           = "org/apache/hadoop/security/UserGroupInformation"
	javaObject          = "java/lang/Object"
	javaString          = "java/lang/String"
	javaSystem          = "java/lang/System"
	javaLong            = "java/lang/Long"
	javaOptional        = "java/util/Optional"
	javaDataInputStream = "java/io/DataInputStream"
	javaBytesInput      = "java/io/ByteArrayInputStream"
)

// tokenJarTime is every jar entry's modification time, so the same yarn-am writes the same jar.
var tokenJarTime = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// tokenJar returns the delegation-token jar: yarnam/flink/TokenProvider and TokenReceiver, the
// service files that let Flink's ServiceLoader find them, and a manifest. The same for every call.
func tokenJar() ([]byte, error) {
	provider, err := tokenProvider()
	if err != nil {
		return nil, fmt.Errorf("flink: token jar: provider class: %w", err)
	}
	receiver, err := tokenReceiver()
	if err != nil {
		return nil, fmt.Errorf("flink: token jar: receiver class: %w", err)
	}
	// A service file names its implementations by their binary names, one a line (java.util.ServiceLoader).
	dotted := func(internal string) string { return strings.ReplaceAll(internal, "/", ".") }
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range []struct {
		name string
		body []byte
	}{
		{"META-INF/MANIFEST.MF", []byte("Manifest-Version: 1.0\r\nCreated-By: yarn-am\r\n\r\n")},
		{"META-INF/services/" + dotted(flinkProvider), []byte(dotted(tokenProviderClass) + "\n")},
		{"META-INF/services/" + dotted(flinkReceiver), []byte(dotted(tokenReceiverClass) + "\n")},
		{tokenProviderClass + ".class", provider},
		{tokenReceiverClass + ".class", receiver},
	} {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: e.name, Method: zip.Deflate, Modified: tokenJarTime})
		if err != nil {
			return nil, fmt.Errorf("flink: token jar: %s: %w", e.name, err)
		}
		if _, err := w.Write(e.body); err != nil {
			return nil, fmt.Errorf("flink: token jar: %s: %w", e.name, err)
		}
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("flink: token jar: %w", err)
	}
	return buf.Bytes(), nil
}

// WriteTokenJar writes the delegation-token jar as dir/TokenJarName, readable by its owner only, and
// returns its path. A JVM that already opened an older copy keeps reading that one: the new jar is
// written beside it and renamed over it (atomicfile).
func WriteTokenJar(dir string) (string, error) {
	jar, err := tokenJar()
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, TokenJarName)
	if err := atomicfile.Write(path, jar, 0o600, atomicfile.TempPattern("."+TokenJarName+"-*")); err != nil {
		return "", fmt.Errorf("flink: token jar: %w", err)
	}
	return path, nil
}

// withServiceBasics adds what the provider and the receiver have alike: a public no-argument
// constructor, serviceName() returning tokenService, and an init(Configuration) that keeps nothing.
func withServiceBasics(c *classfile.ClassBuilder) {
	c.Method(classfile.AccPublic, "<init>", "()V", 1, 1, func(c *classfile.Code) {
		c.Aload(0)
		c.Invokespecial(javaObject, "<init>", "()V")
		c.Return()
	})
	c.Method(classfile.AccPublic, "serviceName", "()L"+javaString+";", 1, 1, func(c *classfile.Code) {
		c.LdcString(tokenService)
		c.Areturn()
	})
	c.Method(classfile.AccPublic, "init", "(L"+flinkConfiguration+";)V", 0, 2, func(c *classfile.Code) {
		c.Return()
	})
}

// tokenProvider is the class
//
//	public final class TokenProvider implements DelegationTokenProvider {
//	  public String serviceName() { return "yarn-am"; }
//	  public void init(Configuration c) {}
//	  public boolean delegationTokensRequired() { return true; }
//	  public ObtainedDelegationTokens obtainDelegationTokens() throws Exception {
//	    return new ObtainedDelegationTokens(
//	      Files.readAllBytes(Paths.get(System.getenv(EnvTokens), new String[0])),
//	      Optional.of(Long.valueOf(System.currentTimeMillis() + Long.parseLong(System.getenv(EnvTokensEvery)))));
//	  }
//	}
//
// A missing variable or file is the exception Flink logs for the provider (a NullPointerException,
// a NoSuchFileException, a NumberFormatException), and Flink asks again later.
func tokenProvider() ([]byte, error) {
	c := classfile.NewClass(tokenProviderClass, javaObject, flinkProvider)
	withServiceBasics(c)
	c.Method(classfile.AccPublic, "delegationTokensRequired", "()Z", 1, 1, func(c *classfile.Code) {
		c.Iconst(1)
		c.Ireturn()
	})
	getenv := func(c *classfile.Code, name string) {
		c.LdcString(name)
		c.Invokestatic(javaSystem, "getenv", "(L"+javaString+";)L"+javaString+";")
	}
	// The deepest stack: the new object twice, the bytes, the time (a long, two slots), then the
	// variable's value: 1+1+1+2+1 = 6, and the parsed long beside the time: 1+1+1+2+2 = 7.
	c.Method(classfile.AccPublic, "obtainDelegationTokens", "()L"+flinkObtained+";", 7, 1, func(c *classfile.Code) {
		c.New(flinkObtained)
		c.Dup()
		getenv(c, EnvTokens)
		c.Iconst(0)
		c.Anewarray(javaString)
		c.Invokestatic("java/nio/file/Paths", "get", "(L"+javaString+";[L"+javaString+";)Ljava/nio/file/Path;")
		c.Invokestatic("java/nio/file/Files", "readAllBytes", "(Ljava/nio/file/Path;)[B")
		c.Invokestatic(javaSystem, "currentTimeMillis", "()J")
		getenv(c, EnvTokensEvery)
		c.Invokestatic(javaLong, "parseLong", "(L"+javaString+";)J")
		c.Ladd()
		c.Invokestatic(javaLong, "valueOf", "(J)L"+javaLong+";")
		c.Invokestatic(javaOptional, "of", "(L"+javaObject+";)L"+javaOptional+";")
		c.Invokespecial(flinkObtained, "<init>", "([BL"+javaOptional+";)V")
		c.Areturn()
	})
	return c.Bytes()
}

// tokenReceiver is the class
//
//	public final class TokenReceiver implements DelegationTokenReceiver {
//	  public String serviceName() { return "yarn-am"; }
//	  public void init(Configuration c) {}
//	  public void onNewTokensObtained(byte[] b) throws Exception {
//	    Credentials c = new Credentials();
//	    c.readTokenStorageStream(new DataInputStream(new ByteArrayInputStream(b)));
//	    UserGroupInformation.getCurrentUser().addCredentials(c);
//	  }
//	}
//
// addCredentials replaces a token of the same alias, so the new tokens take the old ones' place.
func tokenReceiver() ([]byte, error) {
	c := classfile.NewClass(tokenReceiverClass, javaObject, flinkReceiver)
	withServiceBasics(c)
	// Locals: this, b, c. The deepest stack: c, the stream twice, the byte stream twice, b.
	c.Method(classfile.AccPublic, "onNewTokensObtained", "([B)V", 6, 3, func(c *classfile.Code) {
		c.New(hadoopCredentials)
		c.Dup()
		c.Invokespecial(hadoopCredentials, "<init>", "()V")
		c.Astore(2)
		c.Aload(2)
		c.New(javaDataInputStream)
		c.Dup()
		c.New(javaBytesInput)
		c.Dup()
		c.Aload(1)
		c.Invokespecial(javaBytesInput, "<init>", "([B)V")
		c.Invokespecial(javaDataInputStream, "<init>", "(Ljava/io/InputStream;)V")
		c.Invokevirtual(hadoopCredentials, "readTokenStorageStream", "(L"+javaDataInputStream+";)V")
		c.Invokestatic(hadoopUGI, "getCurrentUser", "()L"+hadoopUGI+";")
		c.Aload(2)
		c.Invokevirtual(hadoopUGI, "addCredentials", "(L"+hadoopCredentials+";)V")
		c.Return()
	})
	return c.Bytes()
}
