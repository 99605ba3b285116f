<?php
/**
 * Registers the shop's webhook endpoint with the service when the settings are saved.
 *
 * @package ServicePay\WooCommerce
 */

namespace ServicePay\WooCommerce\Webhooks;

use ServicePay\WooCommerce\Api\ApiClient;
use ServicePay\WooCommerce\Api\ApiException;

defined( 'ABSPATH' ) || exit;

/**
 * Saving the settings again never piles up endpoints: the stored endpoint is updated (URL, all event types,
 * enabled); if the service no longer has it, an endpoint with the shop's URL is looked for and its secret
 * rolled (the service shows a secret only once); only then is a new one created.
 */
final class EndpointRegistrar {

	public const EVENTS = array( 'session.successful', 'session.mismatch', 'session.expired', 'session.cancelled', 'refund.succeeded', 'refund.failed' );

	/** The URL the service calls: the shop's REST route. */
	public static function url(): string {
		return rest_url( 'servicepay/v1/webhook' );
	}

	/**
	 * Makes sure the environment has exactly one endpoint for this shop, with a secret we can read.
	 *
	 * @param ApiClient $api         Client with the environment's secret key.
	 * @param string    $environment `test` or `live`.
	 * @return array{id:string,created:bool} The endpoint id and whether it is new.
	 * @throws ApiException When the service refuses (e.g. an http URL for live).
	 */
	public static function register( ApiClient $api, string $environment ): array {
		$url    = self::url();
		$stored = EndpointStore::get( $environment );
		if ( null !== $stored ) {
			try {
				$endpoint = $api->request( 'PATCH', '/api/webhooks/' . rawurlencode( $stored['id'] ), array( 'url' => $url, 'events' => self::EVENTS, 'enabled' => true ) );
				$secret   = null;
				if ( ! EndpointStore::has_readable_secret( $environment ) ) {
					$secret = (string) $api->request( 'POST', '/api/webhooks/' . rawurlencode( $stored['id'] ) . '/roll-secret' )['secret'];
				}
				EndpointStore::put( $environment, (string) $endpoint['id'], $url, $secret );
				return array( 'id' => (string) $endpoint['id'], 'created' => false );
			} catch ( ApiException $error ) {
				if ( ! in_array( $error->status, array( 403, 404 ), true ) ) {
					throw $error;
				}
				// Deleted at the service, or another business's key now: find or make one below.
			}
		}
		$existing = self::find_by_url( $api, $environment, $url );
		if ( null !== $existing ) {
			$api->request( 'PATCH', '/api/webhooks/' . rawurlencode( $existing ), array( 'events' => self::EVENTS, 'enabled' => true ) );
			$rolled = $api->request( 'POST', '/api/webhooks/' . rawurlencode( $existing ) . '/roll-secret' );
			EndpointStore::put( $environment, $existing, $url, (string) $rolled['secret'] );
			return array( 'id' => $existing, 'created' => false );
		}
		$created = $api->request(
			'POST',
			'/api/webhooks',
			array(
				'url'         => $url,
				'events'      => self::EVENTS,
				'description' => mb_substr( 'WooCommerce: ' . wp_specialchars_decode( get_bloginfo( 'name' ), ENT_QUOTES ), 0, 200 ),
			),
			'wc-webhook-' . substr( hash( 'sha256', $url . $environment ), 0, 16 ) . '-' . time()
		);
		EndpointStore::put( $environment, (string) $created['id'], $url, (string) $created['secret'] );
		return array( 'id' => (string) $created['id'], 'created' => true );
	}

	/**
	 * The id of this environment's endpoint with our URL, if the service has one.
	 *
	 * @param ApiClient $api         Client.
	 * @param string    $environment Environment.
	 * @param string    $url         Our URL.
	 */
	private static function find_by_url( ApiClient $api, string $environment, string $url ): ?string {
		$page = $api->request( 'GET', '/api/webhooks?environment=' . rawurlencode( $environment ) . '&limit=100' );
		foreach ( $page as $endpoint ) {
			if ( is_array( $endpoint ) && ( $endpoint['url'] ?? '' ) === $url ) {
				return (string) $endpoint['id'];
			}
		}
		return null;
	}
}
