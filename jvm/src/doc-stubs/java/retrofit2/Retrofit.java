// Compile-time stand-in for the members of Retrofit 2 that docs/ANDROID.md uses; never packaged, never run.
package retrofit2;

import okhttp3.OkHttpClient;

/**
 * The members of {@code retrofit2.Retrofit} (Retrofit 2.x) that the Kotlin snippets of
 * docs/ANDROID.md call, with the same signatures. Retrofit is not packaged in Debian, so the
 * snippets are type-checked against this class only; every body throws.
 */
public final class Retrofit {
    private Retrofit() {}

    /**
     * Creates an implementation of a service interface.
     *
     * @param service the interface of the API
     * @param <T> the interface type
     * @return never: this stub throws
     */
    public <T> T create(Class<T> service) {
        throw new UnsupportedOperationException("stub of retrofit2.Retrofit");
    }

    /** Retrofit's builder: a base URL and the {@link OkHttpClient} that makes every call. */
    public static final class Builder {
        /** An empty builder. */
        public Builder() {}

        /**
         * @param baseUrl the API's base URL, ending in {@code /}
         * @return this builder
         */
        public Builder baseUrl(String baseUrl) {
            throw new UnsupportedOperationException("stub of retrofit2.Retrofit.Builder");
        }

        /**
         * @param client the client every call goes through (the pinned one)
         * @return this builder
         */
        public Builder client(OkHttpClient client) {
            throw new UnsupportedOperationException("stub of retrofit2.Retrofit.Builder");
        }

        /** @return never: this stub throws */
        public Retrofit build() {
            throw new UnsupportedOperationException("stub of retrofit2.Retrofit.Builder");
        }
    }
}
